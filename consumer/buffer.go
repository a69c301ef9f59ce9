package consumer

import (
	"fmt"
	"strconv"
)

// Policy is a DTrace buffer policy (the bufpolicy option).
type Policy int

// The buffer policies.
const (
	PolicySwitch Policy = iota
	PolicyFill
	PolicyRing
)

func (p Policy) String() string {
	switch p {
	case PolicySwitch:
		return "switch"
	case PolicyFill:
		return "fill"
	case PolicyRing:
		return "ring"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// ParsePolicy parses a bufpolicy value.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "switch":
		return PolicySwitch, nil
	case "fill":
		return PolicyFill, nil
	case "ring":
		return PolicyRing, nil
	}
	return 0, fmt.Errorf("invalid buffer policy %q", s)
}

// DefaultBufSize is dtrace's default bufsize (4m per CPU).
const DefaultBufSize = 4 << 20

// BufferOptions configure OpenBuffers.
type BufferOptions struct {
	// Size is the bufsize option: bytes per CPU. The kernel ring is this
	// rounded up to a power-of-two number of pages. 0 means DefaultBufSize.
	Size int
	// Policy is the bufpolicy option.
	Policy Policy
	// Bound, when positive, is the most bytes of records (the kernel's
	// headers included) a CPU can ever receive: a program whose probes
	// fire a known number of times (BEGIN, END, ERROR) writes no more.
	// The kernel ring is then sized to hold twice that rather than Size,
	// when that is smaller: the kernel allocates, zeroes and maps every
	// page of a perf ring when it is mapped, 8 MB on two CPUs at the
	// default bufsize, for records that could never fill it. What is
	// charged against Size (fill, ring) is unchanged. Ignored with Stamp,
	// whose rings also carry the system's task events.
	Bound int
	// Reserve is kept free under the fill policy for the records of the
	// END probe (see Buffers.Ending), as dtrace reserves room for END.
	Reserve int
	// Charge returns how many bytes a record counts against Size for the
	// fill and ring policies; nil charges its length. The library can
	// charge what DTrace would (its records are laid out differently).
	Charge func(rec []byte) int
	// Backlog is how many bytes per CPU the readers (Buffers.Start)
	// may hold in user space before they leave records in the kernel
	// ring; 0 means 32 rings, at least 64m.
	Backlog int
	// Trigger, under the ring policy, picks the records that go to the
	// handler when drained rather than into the ring (those that take
	// a snapshot).
	Trigger func(rec []byte) bool
	// Stamp makes every record carry the time it was written
	// (CLOCK_MONOTONIC) and the process and thread that wrote it, which
	// Buffers.Stamp reports while the record is handled (timelines).
	Stamp bool
	// Temporal (the temporal option) delivers the records of the switch
	// and fill policies merged across CPUs in time order: each drain
	// holds back what a record not yet read could still precede, and
	// Flush delivers the rest. It implies Stamp. The ring policy merges
	// at Flush anyway and ignores it.
	Temporal bool
}

// Stamp is what the kernel tells of a record beyond its bytes, when
// BufferOptions.Stamp asks for it (zero otherwise; the ring policy always
// has Time).
type Stamp struct {
	// Time is when the record was written, in CLOCK_MONOTONIC
	// nanoseconds.
	Time uint64
	// PID and TID are the process and thread that wrote it.
	PID, TID uint32
	// Cgroup is the id of the writing thread's cgroup (v2, or the
	// perf_event controller's v1 hierarchy where that is mounted), 0
	// when unknown (kernels before 5.7; records kept in a ring).
	Cgroup uint64
}

// Handler receives one record of a CPU. data is only valid during the
// call: copy what must be kept. It runs with the buffers locked, so it
// must not call methods of the Buffers it is reading.
type Handler func(cpu int, data []byte) error

// pagesFor rounds size up to a power-of-two number of pages (at least 1),
// as perf rings need.
func pagesFor(size, pageSize int) int {
	pages := (size + pageSize - 1) / pageSize
	n := 1
	for n < pages {
		n <<= 1
	}
	return n
}
