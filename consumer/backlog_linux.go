package consumer

// The backlog: each CPU's kernel ring copied out to user space in chunks
// of whole perf records, by a reader goroutine per CPU (Start) or by the
// drain itself, and consumed from there by drainCPU.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// backChunk is a chunk of a CPU's backlog, its records from off on not
// yet delivered, and the number of the last pull that copied records
// into it. A drain that stops inside a chunk (its slice spent) moves off
// rather than reslicing data, so that the chunk keeps its whole capacity
// when it is reused: a chunk that shrank could no longer take a record
// of the largest size.
type backChunk struct {
	data []byte
	off  int
	seq  uint64
}

// Start starts the readers: one goroutine per CPU that copies its kernel
// ring into a backlog in user space each time the ring passes its wakeup
// mark, so that records leave the kernel as fast as they arrive and the
// ring has room for a burst however long decoding takes. A reader stops
// copying while its CPU's backlog holds more than Backlog bytes; the
// kernel then drops (and counts) what does not fit. Without Start, Drain
// reads the kernel rings directly. Call it once, before Poll.
func (b *Buffers) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return os.ErrClosed
	}
	if b.started {
		return nil
	}
	b.backlog = b.opts.Backlog
	if b.backlog <= 0 {
		b.backlog = max(defaultBacklogRings*b.RingSize(), minBacklog)
	}
	b.stop = make(chan struct{})
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			return fmt.Errorf("epoll_create: %w", err)
		}
		for _, fd := range []int{c.fd, b.stopFD} {
			if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
				unix.Close(epfd)
				return fmt.Errorf("epoll_ctl: %w", err)
			}
		}
		c.space = make(chan struct{}, 1)
		b.readers.Add(1)
		go b.read(c, epfd)
	}
	b.started = true
	return nil
}

// defaultBacklogRings and minBacklog size a CPU's backlog: 32 kernel
// rings (128m at the default bufsize), at least 64m.
const (
	defaultBacklogRings = 32
	minBacklog          = 64 << 20
)

// readerNice is the readers' nice value.
const readerNice = -10

// read is a CPU's reader: it waits for the ring's wakeup, copies the
// ring out and tells Poll.
func (b *Buffers) read(c *cpuBuf, epfd int) {
	defer b.readers.Done()
	defer unix.Close(epfd)
	// The reader has its own thread with a raised priority (when we
	// may): it sleeps but for a copy per quarter ring, and on a busy
	// machine the time it waits to run is what makes a ring overflow.
	// The thread stays locked: it ends with the reader rather than run
	// other goroutines at that priority.
	runtime.LockOSThread()
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), readerNice)
	events := make([]unix.EpollEvent, 2)
	for {
		n, err := unix.EpollWait(epfd, events, -1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			if int(ev.Fd) == b.stopFD {
				return
			}
		}
		for {
			c.qmu.Lock()
			if c.queued < b.backlog {
				c.pull()
				c.qmu.Unlock()
				break
			}
			c.qmu.Unlock()
			select {
			case <-c.space:
			case <-b.stop:
				return
			}
		}
		select {
		case b.ready <- struct{}{}:
		default:
		}
	}
}

// pull copies what the kernel ring holds to the end of the backlog and
// frees it in the ring. The caller holds c.qmu.
//
// The backlog is made of chunks of chunkSize bytes, each holding whole
// perf records: a pull larger than the room left is split at record
// boundaries. Under the ring policy the chunks are a fixed pool
// allocated at the start, so that a long run's memory stays flat:
// chunks allocated as a late consumer needed them, as large as a pull
// (a quarter of the 16m kernel ring), were touched further and further
// as the run went on, and those beyond the spares kept were garbage
// that the heap grew by until the next collection. What the pool cannot
// take waits in the kernel ring.
func (c *cpuBuf) pull() {
	head := atomic.LoadUint64(&c.meta.dataHead)
	tail := c.meta.dataTail
	if tail == head {
		return
	}
	// Every record copied now was written before head was read, so
	// before this number was taken (see RecordSeq).
	seq := c.seq.Add(1)
	for tail != head {
		var chunk []byte
		start := 0 // where the chunk's records not yet delivered start
		if k := len(c.queue); k > 0 && cap(c.queue[k-1].data)-len(c.queue[k-1].data) >= max(c.nextRecord(tail), 8) {
			chunk, start = c.queue[k-1].data, c.queue[k-1].off
			c.queue = c.queue[:k-1]
		} else if k := len(c.spare); k > 0 {
			chunk = c.spare[k-1][:0]
			c.spare = c.spare[:k-1]
		} else if c.pool > 0 {
			break // the rest waits in the kernel ring
		} else {
			// A chunk larger than the ring is never filled: the
			// ring holds every record a pull can copy. Small rings
			// (BufferOptions.Bound) keep their chunks small, and a
			// program of BEGIN and exit() does not grow the heap by
			// a megabyte per CPU (which made it collect).
			chunk = make([]byte, 0, min(chunkSize, len(c.data)))
		}
		n := c.fitting(tail, head, cap(chunk)-len(chunk))
		at := len(chunk)
		chunk = chunk[:at+n]
		c.copyOut(chunk[at:], tail%uint64(len(c.data)))
		tail += uint64(n)
		c.queue = append(c.queue, backChunk{data: chunk, off: start, seq: seq})
		c.queued += n
	}
	atomic.StoreUint64(&c.meta.dataTail, tail)
}

// chunkSize is the size of a backlog chunk: more than the largest perf
// record (64k).
const chunkSize = 1 << 20

// nextRecord returns the size of the perf record at ring position pos.
// Records are 8-byte aligned, so that their header does not wrap.
func (c *cpuBuf) nextRecord(pos uint64) int {
	off := pos % uint64(len(c.data))
	return int(binary.NativeEndian.Uint16(c.data[off+6:]))
}

// fitting returns how many bytes of the whole records from tail to head
// fit in room (all of them when they do).
func (c *cpuBuf) fitting(tail, head uint64, room int) int {
	if int(head-tail) <= room {
		return int(head - tail)
	}
	n := 0
	for pos := tail; pos != head; {
		size := c.nextRecord(pos)
		if size < 8 || n+size > room {
			if n == 0 {
				// A corrupt header: hand the rest over whole, for
				// records to report.
				return min(int(head-tail), room)
			}
			return n
		}
		n += size
		pos += uint64(size)
	}
	return n
}

// drainCPU copies out what the kernel ring holds and consumes the CPU's
// backlog.
func (b *Buffers) drainCPU(c *cpuBuf, fn Handler) error {
	c.qmu.Lock()
	c.pull()
	queue := c.queue
	c.queue, c.queued = nil, 0
	c.qmu.Unlock()
	if c.space != nil {
		select {
		case c.space <- struct{}{}:
		default:
		}
	}
	for i, chunk := range queue {
		b.curSeq = chunk.seq
		off, err := b.records(c, chunk.data[chunk.off:], fn)
		if err != nil {
			// What follows the failed record (or, when the slice is
			// spent, the record not handled) stays first in the
			// backlog.
			chunk.off += off
			rest := append([]backChunk{chunk}, queue[i+1:]...)
			c.qmu.Lock()
			for _, r := range rest {
				c.queued += len(r.data) - r.off
			}
			c.queue = append(rest, c.queue...)
			c.qmu.Unlock()
			return err
		}
	}
	c.qmu.Lock()
	for _, chunk := range queue {
		if len(c.spare) < max(maxSpare, c.pool) {
			c.spare = append(c.spare, chunk.data[:0])
		}
	}
	c.qmu.Unlock()
	return nil
}

// maxSpare bounds the emptied chunks a CPU keeps for reuse.
const maxSpare = 4
