//go:build linux

package dtrace

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/program"
)

// minResize is the smallest principal buffer bufresize=auto lowers to.
const minResize = 4096

// openPerfBuffers opens the buffers; tests replace it to make the kernel
// short of memory.
var openPerfBuffers = consumer.OpenBuffers

// openBuffers opens the principal buffers at bufsize. Where the kernel
// cannot give that much memory, bufresize=auto halves the size until it
// can (down to a page), as dtrace does, and says so unless quietresize;
// bufresize=manual fails.
func (h *Handle) openBuffers(array *ebpf.Map, o consumer.BufferOptions) (*consumer.Buffers, error) {
	o.Size = int(h.opts.BufSize)
	lowered := false
	for {
		bufs, err := openPerfBuffers(array, o)
		if err == nil {
			if lowered {
				h.opts.BufSize = int64(o.Size)
				if !h.opts.QuietResize {
					fmt.Fprintf(h.conf.Stderr, "dtrace: buffer size lowered to %s\n", FormatSize(int64(o.Size)))
				}
			}
			return bufs, nil
		}
		if !errors.Is(err, unix.ENOMEM) {
			return nil, err
		}
		if h.opts.BufResize != "auto" || o.Size/2 < minResize {
			// In dtrace's words: "could not enable tracing: Cannot
			// allocate memory".
			return nil, errors.New(Strerror(unix.ENOMEM))
		}
		o.Size /= 2
		lowered = true
	}
}

// recordBound returns the most bytes of records the program can write to
// one CPU's principal buffer when every probe it enables fires a known
// number of times: BEGIN and END once each, ERROR (whose clauses run on
// the faulting clause's program) once for each fault of theirs. Each
// firing writes each record segment of its clause at most once (there
// are no loops in D; an if/else sends one branch's) and at most one
// fault record. It returns 0 when some probe may fire any number of
// times. BEGIN and END may both run on one CPU, so the bound is per CPU.
func recordBound(spec *program.Spec, plan *loader.Plan) int {
	firing := func(clause int) int {
		n := perfRecordSize(abi.FaultRecordSize)
		for _, seg := range spec.Clauses[clause].Segments {
			n += perfRecordSize(seg.Size)
		}
		return n
	}
	var once, fired, onError int
	for _, pp := range plan.Probes {
		switch pp.Probe.ID {
		case abi.ProbeBegin, abi.ProbeEnd:
			for _, c := range pp.Clauses {
				once += firing(c)
				fired++
			}
		case abi.ProbeError:
			for _, c := range pp.Clauses {
				onError += firing(c)
			}
		default:
			return 0
		}
	}
	return once + fired*onError
}

// perfRecordSize is what a record of size bytes takes in a perf ring: the
// event header, the raw sample's u32 size, then the data, padded to 8.
func perfRecordSize(size uint32) int {
	return perfHeaderSize + (4+int(size)+7)&^7
}
