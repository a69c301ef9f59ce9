//go:build linux

package dtrace

import (
	"fmt"
	"os"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/unwind"
)

// userAddresses reports whether the program names user addresses from
// the objects processes map: ustack() and the like, or a format's %A.
func userAddresses(spec *program.Spec) bool {
	if spec.UserAddresses() {
		return true
	}
	for _, s := range spec.Formats {
		if f, err := format.Parse(s); err == nil && f.HasUaddr() {
			return true
		}
	}
	return false
}

// startUnwinder fills the user-stack unwinder's tables when a clause
// takes ustack() (docs/STACKS.md): the $target's objects (and the
// libraries a process held at exec will load) before tracing starts,
// every running process's in the background when there is no target, and
// from then on the files the probes meet without a table.
func (h *Handle) startUnwinder() {
	files := h.objs.Map(abi.MapUWFiles)
	if files == nil {
		return
	}
	var opts unwind.MapsOptions
	if os.Getenv("DTRACE_UWDEBUG") != "" {
		opts.Warn = func(s string) { fmt.Fprintln(os.Stderr, "unwind:", s) }
	}
	h.uw = unwind.NewMaps(files, h.objs.Map(abi.MapUWTables), h.objs.Map(abi.MapUWMiss), opts)
	if h.conf.Target != 0 {
		if p, err := h.sym.Process(h.conf.Target); err == nil {
			h.uw.LoadSnapshot(p, true)
		}
	}
	h.uw.Start()
	if h.conf.Target == 0 {
		go h.uw.LoadAll()
	}
}
