//go:build linux

package dtrace

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/consumer"
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
