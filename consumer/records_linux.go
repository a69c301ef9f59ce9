// This file holds the ring reading of Buffers: perf records from a
// chunk, copied out of a ring that wraps, stamped and delivered, and the
// user-space ring of the ring policy.

package consumer

import (
	"encoding/binary"
	"fmt"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
	"golang.org/x/sys/unix"
)

// ringPool is the number of backlog chunks of a CPU under the ring
// policy: two pulls of a quarter of its 16m kernel ring.
const ringPool = 8

// allocRing gives c, under the ring policy, its user-space ring of size
// bytes and its pool of backlog chunks.
func (c *cpuBuf) allocRing(size int) error {
	buf, err := resident(2 * size)
	if err != nil {
		return err
	}
	c.owned = append(c.owned, buf)
	c.ring = newRecRing(buf)
	c.pool = ringPool
	for range ringPool {
		chunk, err := resident(chunkSize)
		if err != nil {
			return err
		}
		c.owned = append(c.owned, chunk)
		c.spare = append(c.spare, chunk[:0])
	}
	return nil
}

// resident maps n zeroed bytes with every page present. They are
// outside Go's heap: a heap holding the ring's megabytes would let
// garbage grow as large before a collection, and the resident set with
// it.
func resident(n int) ([]byte, error) {
	m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("buffers: map %d bytes: %w", n, err)
	}
	return m, nil
}

// records consumes the perf records of a chunk and returns the offset
// after the last one consumed.
func (b *Buffers) records(c *cpuBuf, chunk []byte, fn Handler) (int, error) {
	off := 0
	for n := 0; off+8 <= len(chunk); n++ {
		if n%16 == 15 && b.spent() {
			return off, errSliceSpent
		}
		typ := binary.NativeEndian.Uint32(chunk[off:])
		recSize := int(binary.NativeEndian.Uint16(chunk[off+6:]))
		if recSize < 8 || off+recSize > len(chunk) {
			return len(chunk), fmt.Errorf("buffers: CPU %d: corrupt perf record of %d bytes", c.cpu, recSize)
		}
		body := chunk[off+8 : off+recSize]
		off += recSize
		switch typ {
		case unix.PERF_RECORD_COMM, unix.PERF_RECORD_FORK, unix.PERF_RECORD_EXIT:
			b.comms.sideband(typ, body)
		case unix.PERF_RECORD_LOST:
			if len(body) >= 16 {
				c.lost += binary.NativeEndian.Uint64(body[8:])
			}
		case unix.PERF_RECORD_SAMPLE:
			// PERF_SAMPLE_TID comes before PERF_SAMPLE_TIME.
			var st Stamp
			if c.ids {
				if len(body) < 8 {
					continue
				}
				st.PID, st.TID = binary.NativeEndian.Uint32(body), binary.NativeEndian.Uint32(body[4:])
				body = body[8:]
			}
			if c.timed {
				if len(body) < 8 {
					continue
				}
				st.Time = binary.NativeEndian.Uint64(body)
				body = body[8:]
			}
			if len(body) < 4 {
				continue
			}
			n := int(binary.NativeEndian.Uint32(body))
			if 4+n > len(body) {
				n = len(body) - 4
			}
			rec := body[4 : 4+n]
			if c.ids && len(body) >= 4+n+8 {
				// The raw data is padded so that what follows it is
				// 8-byte aligned.
				st.Cgroup = binary.NativeEndian.Uint64(body[4+n:])
			}
			if len(rec) >= 8 && binary.LittleEndian.Uint32(rec[abi.HdrEPID:]) == abi.EPIDNone {
				continue // a Sync marker
			}
			if err := b.deliver(c, rec, st, fn); err != nil {
				return off, err
			}
		}
	}
	return off, nil
}

// copyOut copies len(dst) bytes at ring offset off, wrapping.
func (c *cpuBuf) copyOut(dst []byte, off uint64) {
	n := copy(dst, c.data[off:])
	copy(dst[n:], c.data)
}

func (b *Buffers) deliver(c *cpuBuf, rec []byte, st Stamp, fn Handler) error {
	switch b.opts.Policy {
	case PolicyFill:
		// Until Ending, Reserve bytes stay free for the END records.
		limit := b.opts.Size - b.opts.Reserve
		if b.ending {
			limit = b.opts.Size
		}
		charge := b.opts.Charge(rec)
		if (c.full && !b.ending) || c.charged+charge > limit {
			c.full = true
			c.dropped++
			return nil
		}
		c.charged += charge
	case PolicyRing:
		if b.opts.Trigger != nil && b.opts.Trigger(rec) {
			break // acted on now
		}
		if !c.ring.add(rec, st, b.opts.Charge(rec)) {
			// Larger than the whole ring: lost, and counted, as
			// illumos counts a record its ring buffer cannot hold.
			c.dropped++
		}
		return nil
	}
	if b.opts.Temporal {
		c.held = append(c.held, heldRec{rec: append([]byte(nil), rec...), st: st, seq: b.curSeq})
		c.last = max(c.last, st.Time)
		return nil
	}
	b.cur = st
	return fn(c.cpu, rec)
}

// Flush is what the library calls at exit and for a snapshot: it syncs
// (see Sync: drain, make pending losses known, drain again) and, in ring
// policy, delivers the records kept in the user-space rings, all CPUs
// merged in time order, and empties them. Drops after Flush are
// complete.
func (b *Buffers) Flush(fn Handler) error {
	if err := b.Sync(fn); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.release(^uint64(0), fn); err != nil {
		return err
	}
	for {
		var next *cpuBuf
		var first uint64
		for _, c := range b.cpus {
			if c == nil || c.ring == nil || c.ring.len() == 0 {
				continue
			}
			if _, st := c.ring.peek(); next == nil || st.Time < first {
				next, first = c, st.Time
			}
		}
		if next == nil {
			return nil
		}
		rec, st := next.ring.peek()
		b.cur, b.curSeq = st, ^uint64(0)
		err := fn(next.cpu, rec)
		next.ring.pop()
		if err != nil {
			return err
		}
	}
}

// Stamp returns the stamp of the record a Handler is handling (see
// BufferOptions.Stamp). Unlike the other methods, a Handler may call it.
func (b *Buffers) Stamp() Stamp { return b.cur }

// Drops returns the principal-buffer drops counted since the last call,
// per CPU in CPU order, and resets the counts. In ring policy, records
// the kernel could not store would have been overwritten anyway and are
// not reported; records larger than the ring are.
func (b *Buffers) Drops() []output.Drop {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []output.Drop
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		n := c.lost + c.dropped
		if b.opts.Policy == PolicyRing {
			n = c.dropped
		}
		c.lost, c.dropped = 0, 0
		if n > 0 {
			out = append(out, output.Drop{CPU: c.cpu, Kind: output.DropPrincipal, Count: n})
		}
	}
	return out
}

// Ending tells the buffers that what follows are the END probe's records:
// under the fill policy they may use the Reserve. Drain the buffers
// before calling it, so that earlier records are charged as before.
func (b *Buffers) Ending() {
	b.mu.Lock()
	b.ending = true
	b.mu.Unlock()
}

// Filled reports whether a CPU's buffer filled up under the fill policy;
// the library then stops tracing, as dtrace does.
func (b *Buffers) Filled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.cpus {
		if c != nil && c.full {
			return true
		}
	}
	return false
}

// Close unmaps and closes every ring; the kernel then discards what
// probes still send.
func (b *Buffers) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.Wake() // a Poll waiting on epoll would not notice the close
	b.closed = true
	b.gone.Store(true)
	if b.started {
		close(b.stop)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(b.stopFD, one[:])
		b.readers.Wait()
	}
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		if b.array != nil {
			b.array.Delete(uint32(c.cpu))
		}
		unix.Munmap(c.mem)
		for _, m := range c.owned {
			unix.Munmap(m)
		}
		unix.Close(c.fd)
	}
	b.cpus = nil
	if b.marker != nil {
		b.marker.Close()
	}
	if b.array != nil {
		b.array.Close()
	}
	if b.epfd >= 0 {
		unix.Close(b.epfd)
	}
	if b.wakeFD >= 0 {
		unix.Close(b.wakeFD)
	}
	if b.stopFD >= 0 {
		unix.Close(b.stopFD)
	}
	return nil
}
