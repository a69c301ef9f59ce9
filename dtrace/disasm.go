package dtrace

import (
	"fmt"
	"io"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/bpfdis"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/provider"
)

// disasm returns the disasm option's bits, its default when unset.
func (h *Handle) disasm() int64 {
	if h.opts.Disasm == Unset {
		return disasmDefault
	}
	return h.opts.Disasm
}

// programListing returns what the loader calls with each probe program
// at each stage of its making, for dtrace -S with the disasm option's
// program bits set (nil when there is nothing to list): it writes the
// programs of the selected stages as dtrace-utils writes its probe
// programs, "Disassembly of program", "linked program" or "final
// program" and the probe's name, the instructions and the relocation
// table. A program shared by several probes names them all.
func (h *Handle) programListing() func(loader.Stage, []*provider.Probe, asm.Instructions) {
	bits := h.disasm()
	if !h.opts.Verbose || h.conf.Stderr == nil || bits&(DisasmProgram|DisasmLinked|DisasmFinal) == 0 {
		return nil
	}
	w := h.conf.Stderr
	return func(stage loader.Stage, probes []*provider.Probe, insns asm.Instructions) {
		var kind string
		switch stage {
		case loader.StageProgram:
			if bits&DisasmProgram == 0 {
				return
			}
			kind = "program"
		case loader.StageLinked:
			if bits&DisasmLinked == 0 {
				return
			}
			kind = "linked program"
		case loader.StageFinal:
			if bits&DisasmFinal == 0 {
				return
			}
			kind = "final program"
		default:
			return
		}
		writeProgramListing(w, kind, probes, insns)
	}
}

// writeProgramListing writes one probe program's listing under the
// heading "Disassembly of KIND PROBES:".
func writeProgramListing(w io.Writer, kind string, probes []*provider.Probe, insns asm.Instructions) {
	fmt.Fprintf(w, "\nDisassembly of %s %s:\n", kind, strings.Join(provider.Names(probes), ", "))
	l, err := bpfdis.FromInstructions(insns)
	if err != nil {
		// The loader will refuse the program too, saying why.
		fmt.Fprintf(w, "(not listed: %v)\n\n", err)
		return
	}
	l.Write(w)
	l.WriteRelocs(w)
	fmt.Fprintln(w)
}
