package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// Every instruction of a clause runs on every event of its probes, so a
// clause carries none for what it does not use. Two kinds are only known
// to be useless once the clause is complete, and compact removes them
// then:
//
//   - the prologue's stores of the scratch area's address (msBase) and of
//     the empty alloca() span (msAllocaLo/Hi), when the clause never
//     loads them: no alloca(), no check of a pointer into scratch;
//   - jumps-by-zero: mark's two labels on one spot, and the speculate()
//     placeholders flush did not need. The next instruction takes their
//     label (or the jumps to it go to the next one's).
//
// Jumps are by label until the program is loaded, so removing
// instructions moves none; the fault PCs stored as numbers (fault) are
// renumbered.

// optStore is a prologue store compact may remove: the instructions at
// at..at+n-1 (stores to the mstate slots) are dead when the clause loads
// none of slots.
type optStore struct {
	at, n int
	slots []int16
}

// compact removes the clause's dead prologue stores and jumps-by-zero.
func (f *fn) compact(opt ...optStore) {
	drop := make([]bool, len(f.insns))
	for _, o := range opt {
		if !f.loads(o.slots...) {
			for i := o.at; i < o.at+o.n; i++ {
				drop[i] = true
			}
		}
	}
	alias := map[string]string{}
	for i := len(f.insns) - 2; i >= 0; i-- {
		ins := f.insns[i]
		if ins.OpCode != asm.Ja.Op(asm.ImmSource) || ins.Offset != 0 || ins.Reference() != "" || ins.Constant != 0 {
			continue
		}
		next := &f.insns[i+1]
		if l := ins.Symbol(); l != "" {
			if n := next.Symbol(); n != "" {
				alias[l] = n
			} else {
				*next = next.WithSymbol(l)
			}
		}
		drop[i] = true
	}
	// Carry dropped instructions' source lines to the next one kept, for
	// -S; and their labels, when a dropped prologue store has one.
	var src fmt.Stringer
	var sym string
	out := make(asm.Instructions, 0, len(f.insns))
	newPC := make([]int, len(f.insns)+1)
	for i, ins := range f.insns {
		newPC[i] = len(out)
		if drop[i] {
			if s := ins.Source(); s != nil && src == nil {
				src = s
			}
			if ins.Symbol() != "" && !(ins.OpCode == asm.Ja.Op(asm.ImmSource)) {
				sym = ins.Symbol()
			}
			continue
		}
		if src != nil && ins.Source() == nil {
			ins = ins.WithSource(src)
		}
		src = nil
		if sym != "" {
			if s := ins.Symbol(); s != "" {
				alias[sym] = s
			} else {
				ins = ins.WithSymbol(sym)
			}
			sym = ""
		}
		out = append(out, ins)
	}
	newPC[len(f.insns)] = len(out)
	if len(out) == len(f.insns) {
		return
	}
	ms := int16(f.g.layout.MState)
	for i, ins := range out {
		if ref := ins.Reference(); ref != "" {
			if to, ok := alias[ref]; ok {
				for alias[to] != "" {
					to = alias[to]
				}
				out[i] = ins.WithReference(to)
			}
		}
		if ins.OpCode.Class() == asm.StClass && ins.Dst == regScratch && ins.Offset == ms+msFaultPC {
			out[i].Constant = int64(newPC[ins.Constant])
		}
	}
	f.insns = out
}

// loads reports whether the clause loads any of the mstate slots.
func (f *fn) loads(slots ...int16) bool {
	ms := int16(f.g.layout.MState)
	for _, ins := range f.insns {
		if ins.OpCode.Class() != asm.LdXClass || ins.Src != regScratch {
			continue
		}
		for _, s := range slots {
			if ins.Offset == ms+s {
				return true
			}
		}
	}
	return false
}
