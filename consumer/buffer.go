package consumer

import (
	"fmt"
	"strconv"
	"strings"
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
	// Reserve is kept free under the fill policy for the records of the
	// END probe (see Buffers.Ending), as dtrace reserves room for END.
	Reserve int
	// Charge returns how many bytes a record counts against Size for the
	// fill and ring policies; nil charges its length. The library can
	// charge what DTrace would (its records are laid out differently).
	Charge func(rec []byte) int
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

// ParseSize parses a DTrace size option value such as "64k", "4m" or
// "512" (bytes); suffixes k, m, g, t are powers of 1024, either case.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return v * mult, nil
}
