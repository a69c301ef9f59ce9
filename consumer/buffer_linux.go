package consumer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
)

// Buffers are the per-CPU principal buffers of one session.
type Buffers struct {
	opts     BufferOptions
	array    *ebpf.Map // a clone: the kernel drops entries when the last fd closes
	cpus     []*cpuBuf // indexed by CPU id; nil for offline CPUs
	epfd     int
	wakeFD   int
	pageSize int

	marker *ebpf.Program // lazily loaded by Sync

	mu     sync.Mutex // serializes Poll, Drain, Flush, Close
	closed bool
	ending bool        // fill: END records may use the reserve
	gone   atomic.Bool // closed, for Wake without the lock
	events []unix.EpollEvent
	cur    Stamp // the stamp of the record being handled
	comms  comms // threads' names, while records are stamped

	// Readers (Start): one goroutine per CPU copies what its kernel
	// ring holds into the CPU's backlog as soon as the ring passes its
	// wakeup mark, so that the ring empties at the rate records arrive
	// whatever the decoding costs; ready tells Poll that a backlog
	// grew. stopFD ends the readers.
	readers sync.WaitGroup
	started bool
	stopFD  int
	ready   chan struct{}
	wake    chan struct{}
	stop    chan struct{}
	backlog int // bytes a reader may hold per CPU before it waits

	// slice bounds the time a Poll or Drain spends delivering records
	// (0: no bound); what it leaves stays queued for the next call, so
	// that a caller who must act on something (a signal) is never held
	// longer. deadline is that of the drain in progress, next the CPU
	// the next drain starts at, so that a busy CPU does not starve the
	// others.
	slice    time.Duration
	deadline time.Time
	next     int
	// seq numbers the copies out of the kernel rings (pulls); curSeq is
	// that of the record being handled (RecordSeq).
	seq    atomic.Uint64
	curSeq uint64
}

type cpuBuf struct {
	cpu  int
	fd   int
	mem  []byte // control page + data
	data []byte
	meta *perfMeta

	lost    uint64 // records the kernel reported lost, not yet reported
	charged int    // bytes charged (fill, ring)
	full    bool   // fill: this CPU's buffer is full
	dropped uint64 // fill: records dropped once full; ring: records larger than the ring; not yet reported

	ring *recRing // ring policy: the newest records, oldest first

	// held are the records read but not yet delivered under Temporal,
	// oldest first; last is the time of the newest record read.
	held []heldRec
	last uint64
	// pool, when nonzero, is the fixed number of backlog chunks: pull
	// allocates none beyond them (ring policy). owned are the mappings
	// of the ring and the pool, unmapped by Close.
	pool  int
	owned [][]byte

	// ids and timed say what the samples carry before their raw
	// data (openRing).
	ids, timed bool

	// qmu guards the ring's tail and the backlog: chunks of the kernel
	// ring's bytes (whole perf records) copied out by the reader or by
	// Drain, oldest first, not yet delivered. queued counts their bytes;
	// spare holds emptied chunks for reuse.
	qmu    sync.Mutex
	queue  []backChunk
	queued int
	seq    *atomic.Uint64 // the Buffers' pull counter
	spare  [][]byte
	space  chan struct{} // the backlog was taken (Start)
}

// perfMeta mirrors the head of struct perf_event_mmap_page that we use.
type perfMeta struct {
	_        [1024]byte
	dataHead uint64
	dataTail uint64
}

// OpenBuffers opens a perf ring on every online CPU and stores it in the
// dt_buf PERF_EVENT_ARRAY m.
func OpenBuffers(m *ebpf.Map, opts BufferOptions) (_ *Buffers, err error) {
	if m.Type() != ebpf.PerfEventArray {
		return nil, fmt.Errorf("buffers: map %v is not a perf event array", m)
	}
	if opts.Size <= 0 {
		opts.Size = DefaultBufSize
	}
	if opts.Charge == nil {
		opts.Charge = func(rec []byte) int { return len(rec) }
	}
	if opts.Policy == PolicyRing {
		opts.Temporal = false
	}
	opts.Stamp = opts.Stamp || opts.Temporal
	online, err := kernel.OnlineCPUs()
	if err != nil {
		return nil, err
	}
	b := &Buffers{opts: opts, epfd: -1, wakeFD: -1, stopFD: -1, pageSize: os.Getpagesize(),
		ready: make(chan struct{}, 1), wake: make(chan struct{}, 1)}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	if b.array, err = m.Clone(); err != nil {
		return nil, err
	}
	if b.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create: %w", err)
	}
	if b.wakeFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, b.wakeFD, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(b.wakeFD)}); err != nil {
		return nil, err
	}
	if b.stopFD, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	pages := pagesFor(opts.Size, b.pageSize)
	if opts.Policy == PolicyRing {
		// The ring keeps bufsize in user space; the kernel's ring only
		// carries records there, and must not fill when the reader is
		// late: what the kernel drops are the newest records.
		pages = pagesFor(max(opts.Size, ringCarrier), b.pageSize)
	}
	if opts.Bound > 0 && !opts.Stamp {
		pages = min(pages, pagesFor(2*opts.Bound, b.pageSize))
	}
	for _, cpu := range online {
		if cpu >= int(m.MaxEntries()) {
			continue
		}
		for len(b.cpus) <= cpu {
			b.cpus = append(b.cpus, nil)
		}
		c, err := openRing(cpu, pages, b.pageSize, opts.Policy == PolicyRing || opts.Stamp, opts.Stamp)
		if errors.Is(err, unix.ENODEV) {
			continue // went offline
		}
		if err != nil {
			return nil, fmt.Errorf("buffers: CPU %d: %w", cpu, err)
		}
		b.cpus[cpu] = c
		c.seq = &b.seq
		if opts.Policy == PolicyRing {
			// The ring and the backlog, a fixed set of chunks (see
			// pull), are allocated and touched now.
			if err := c.allocRing(opts.Size); err != nil {
				return nil, err
			}
		}
		if err := unix.EpollCtl(b.epfd, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
			return nil, err
		}
		if err := b.array.Put(uint32(cpu), uint32(c.fd)); err != nil {
			return nil, fmt.Errorf("buffers: store CPU %d ring: %w", cpu, err)
		}
	}
	b.events = make([]unix.EpollEvent, len(b.cpus)+1)
	return b, nil
}

// openRing opens a CPU's perf ring; timed samples carry their time
// (CLOCK_MONOTONIC), which the ring policy orders CPUs by, and ids
// samples the pid and tid of the thread that wrote them.
func openRing(cpu, pages, pageSize int, timed, ids bool) (*cpuBuf, error) {
	attr := unix.PerfEventAttr{
		Type:        unix.PERF_TYPE_SOFTWARE,
		Config:      unix.PERF_COUNT_SW_BPF_OUTPUT,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample_type: unix.PERF_SAMPLE_RAW,
		Sample:      1,
		Bits:        unix.PerfBitWatermark,
		// Wake the reader when a quarter of the ring is used, so that
		// a busy CPU is copied out with three quarters still free.
		Wakeup: uint32(max(pages*pageSize/4, 1)),
	}
	if ids {
		// The cgroup id follows the raw data (5.7 and later). The
		// side-band records of the CPU's tasks (exec and rename,
		// fork, exit) name the threads that wrote records (comm.go).
		attr.Sample_type |= unix.PERF_SAMPLE_TID | unix.PERF_SAMPLE_CGROUP
		attr.Bits |= unix.PerfBitComm | unix.PerfBitTask
	}
	if timed {
		attr.Sample_type |= unix.PERF_SAMPLE_TIME
		attr.Bits |= unix.PerfBitUseClockID
		attr.Clockid = unix.CLOCK_MONOTONIC
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("perf_event_open: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, (pages+1)*pageSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("mmap perf ring: %w", err)
	}
	return &cpuBuf{
		cpu:   cpu,
		ids:   ids,
		timed: timed,
		fd:    fd,
		mem:   mem,
		data:  mem[pageSize:],
		meta:  (*perfMeta)(unsafe.Pointer(&mem[0])),
	}, nil
}

// CPUs returns the ids of the CPUs that have a buffer.
func (b *Buffers) CPUs() []int {
	var out []int
	for _, c := range b.cpus {
		if c != nil {
			out = append(out, c.cpu)
		}
	}
	return out
}

// RingSize returns the size in bytes of each kernel ring.
func (b *Buffers) RingSize() int {
	for _, c := range b.cpus {
		if c != nil {
			return len(c.data)
		}
	}
	return 0
}

// ringCarrier is the least size of a kernel ring under the ring policy.
const ringCarrier = 16 << 20

// Poll waits until a reader copied records out (with Start) or a buffer
// passed its wakeup mark (without), Wake is called or timeout passes
// (the switchrate), then drains every buffer as Drain does. A negative
// timeout waits without limit. Only one goroutine may Poll at a time.
func (b *Buffers) Poll(timeout time.Duration, fn Handler) error {
	b.mu.Lock()
	closed, started := b.closed, b.started
	// What a sliced drain left goes on at once.
	behind := b.pending()
	b.mu.Unlock()
	if closed {
		return os.ErrClosed
	}
	if behind {
		return b.Drain(fn)
	}
	// Wait without the lock so that Wake and Close can run.
	if started {
		var expire <-chan time.Time
		if timeout >= 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expire = t.C
		}
		select {
		case <-b.ready:
		case <-b.wake:
		case <-expire:
		}
		return b.Drain(fn)
	}
	ms := -1
	if timeout >= 0 {
		ms = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	_, err := unix.EpollWait(b.epfd, b.events, ms)
	if err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("epoll_wait: %w", err)
	}
	var v [8]byte
	unix.Read(b.wakeFD, v[:]) // reset; EAGAIN when not woken
	return b.Drain(fn)
}

// Sync drains the buffers, then makes the kernel report records it lost
// since the last one it could store (it does so only in front of the next
// record that fits) by sending an EPID-0 marker on every CPU, and drains
// again. Call it before the last Drops at exit so that no drop goes
// unreported. Records with EPID 0 are never delivered.
func (b *Buffers) Sync(fn Handler) error {
	if err := b.drain(fn, false); err != nil {
		return err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return os.ErrClosed
	}
	if b.marker == nil {
		p, err := markerProgram(b.array)
		if err != nil {
			b.mu.Unlock()
			return fmt.Errorf("buffers: sync: %w", err)
		}
		b.marker = p
	}
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		ctx := make([]uint64, 1)
		_, err := b.marker.Run(&ebpf.RunOptions{Context: ctx, CPU: uint32(c.cpu), Flags: 1 /* BPF_F_TEST_RUN_ON_CPU */})
		if err != nil {
			b.mu.Unlock()
			return fmt.Errorf("buffers: sync CPU %d: %w", c.cpu, err)
		}
	}
	b.mu.Unlock()
	return b.drain(fn, false)
}

// markerProgram sends an 8-byte record {epid 0, 0} to the current CPU's
// buffer.
func markerProgram(array *ebpf.Map) (*ebpf.Program, error) {
	insns := asm.Instructions{
		asm.StoreImm(asm.RFP, -8+abi.HdrEPID, abi.EPIDNone, asm.Word),
		asm.StoreImm(asm.RFP, -4, 0, asm.Word),
		asm.LoadMapPtr(asm.R2, array.FD()),
		asm.LoadImm(asm.R3, 0xffffffff, asm.DWord), // BPF_F_CURRENT_CPU
		asm.Mov.Reg(asm.R4, asm.RFP),
		asm.Add.Imm(asm.R4, -8),
		asm.Mov.Imm(asm.R5, 8),
		asm.FnPerfEventOutput.Call(),
		asm.Mov.Imm(asm.R0, 0),
		asm.Return(),
	}
	return ebpf.NewProgram(&ebpf.ProgramSpec{Name: "dt_sync", Type: ebpf.RawTracepoint, Instructions: insns, License: "GPL"})
}

// Wake makes a Poll in progress return at once.
func (b *Buffers) Wake() {
	if b.gone.Load() || b.wakeFD < 0 {
		return
	}
	select {
	case b.wake <- struct{}{}:
	default:
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	unix.Write(b.wakeFD, one[:])
}

// Drain consumes every record available now, CPU by CPU in CPU order. In
// switch and fill policy each record goes to fn; in ring policy records
// are kept for Flush. An error from fn stops the drain; the record that
// failed counts as consumed.
func (b *Buffers) Drain(fn Handler) error { return b.drain(fn, true) }

// drain is Drain, within the slice (SetSlice) when sliced.
func (b *Buffers) drain(fn Handler, sliced bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return os.ErrClosed
	}
	// Under Temporal, what is written from now on is stamped later than
	// this (but for records in flight: see temporalSlack).
	var now unix.Timespec
	if b.opts.Temporal {
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	}
	if sliced {
		b.startSlice()
		defer func() { b.deadline = time.Time{} }()
	}
	n := len(b.cpus)
	for i := range n {
		at := (b.next + i) % n
		c := b.cpus[at]
		if c == nil {
			continue
		}
		if err := b.drainCPU(c, fn); err != nil {
			if errors.Is(err, errSliceSpent) {
				b.next = (at + 1) % n
				return nil
			}
			return err
		}
	}
	if !b.opts.Temporal {
		return nil
	}
	return b.release(b.safeTime(uint64(now.Nano())), fn)
}

// Comm returns the name the kernel last gave thread tid (at exec, at a
// rename, or its parent's at fork) while records are stamped, also after
// the thread exited; "" when it gave none (a thread that has done none
// of these since the buffers opened). Any goroutine may call it.
func (b *Buffers) Comm(tid int) string { return b.comms.name(uint32(tid)) }
