package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file narrows the string items of aggregation keys. A key item of
// type string is strsize+1 bytes wide in general, and every firing would
// zero, copy and hash all of it. When every key expression an aggregation
// is ever given at that position has a known bound — execname is at most
// TASK_COMM_LEN bytes, the probe names at most abi.ProbeNameSize, a literal
// its own length — the item is only as wide as the largest bound. The
// consumer reads items by the offsets and sizes of AggSpec.Keys, so a
// narrow item needs nothing there.

// taskCommLen is the kernel's TASK_COMM_LEN: execname's bytes with the NUL.
const taskCommLen = 16

// strBound returns the most bytes (with the NUL) that the string
// expression e can produce, or 0 when it is not bounded below strsize.
func (g *gen) strBound(e syntax.Expr) uint32 {
	switch x := e.(type) {
	case *syntax.ParenExpr:
		return g.strBound(x.X)
	case *syntax.CondExpr:
		a, b := g.strBound(x.X), g.strBound(x.Y)
		if a == 0 || b == 0 {
			return 0
		}
		return max(a, b)
	case *syntax.StringLit:
		return uint32(len(x.Value)) + 1
	}
	if g.info.Expand(e) != nil {
		return 0
	}
	v := g.info.VarOf(e)
	if v == nil || v.Kind != VarBuiltin {
		return 0
	}
	if vg := varGenOf(v.Name); vg != nil {
		return vg.strBound
	}
	return 0
}

// scanKeyWidths records, for each aggregation, the bound of each string
// key position over all the aggregation's keyed references (0: full
// width).
func (g *gen) scanKeyWidths(clauses []Clause) {
	g.keyWidths = map[int][]uint32{}
	unbounded := map[int]map[int]bool{}
	for _, c := range clauses {
		syntax.InspectCode(c.Decl, func(n syntax.Node) bool {
			ag, ok := n.(*syntax.AggExpr)
			if !ok || len(ag.Keys) == 0 {
				return true
			}
			ai := g.info.AggOf(ag)
			if ai == nil {
				return true
			}
			w := g.keyWidths[ai.ID]
			for len(w) < len(ag.Keys) {
				w = append(w, 0)
			}
			if unbounded[ai.ID] == nil {
				unbounded[ai.ID] = map[int]bool{}
			}
			for i, k := range ag.Keys {
				b := g.strBound(k)
				if b == 0 {
					unbounded[ai.ID][i] = true
				}
				w[i] = max(w[i], b)
			}
			g.keyWidths[ai.ID] = w
			return true
		})
	}
	for id, w := range g.keyWidths {
		for i := range w {
			if unbounded[id][i] || w[i] >= g.opts.StrSize+1 {
				w[i] = 0
			}
		}
	}
}

// narrowKey returns the key item type for aggregation id at position i:
// kt itself, or a string of the position's bound.
func (g *gen) narrowKey(id, i int, kt *program.Type) *program.Type {
	if !kt.IsString() || kt.KeyWidth != 0 {
		return kt
	}
	w := g.keyWidths[id]
	if i >= len(w) || w[i] == 0 {
		return kt
	}
	n := *kt
	n.KeyWidth = w[i]
	return &n
}

// narrowString stores the string expression k into the key item at
// scratch offset off, of kt.KeyWidth bytes already zeroed.
func (f *fn) narrowString(k syntax.Expr, kt *program.Type, off uint32) {
	k = syntax.Unparen(k)
	if v := f.g.info.VarOf(k); v != nil && v.Kind == VarBuiltin && f.g.info.Expand(k) == nil {
		if g := varGenOf(v.Name); g != nil && g.keyInto != nil && g.keyInto(f, v.Name, off, kt.KeyWidth) {
			return
		}
	}
	r := f.expr(k)
	p := f.alloc()
	f.scratchPtr(p, off)
	f.call(asm.FnProbeReadKernelStr, reg(p), imm(int64(kt.KeyWidth)), reg(r))
}

// commInto stores the current task's comm at scratch offset off as
// bpf_get_current_comm would (16 bytes, NUL-padded after the name). With
// the offset of task_struct.comm known it loads the two words from the
// task (a BTF pointer, so the loads cannot fault) and clears every byte
// after the first NUL, whatever the kernel left there.
func (f *fn) commInto(off uint32) {
	var co uint32
	if mo := f.g.opts.MemberOffset; mo != nil {
		if off, err := mo("task_struct", "comm"); err == nil {
			co = off
		}
	}
	if co == 0 || co > 0x7fff-8 {
		f.call(asm.FnGetCurrentComm, scr(off), imm(taskCommLen))
		return
	}
	f.call(asm.FnGetCurrentTaskBtf)
	task := f.result()
	w0, w1, t, m := f.alloc(), f.alloc(), f.alloc(), f.alloc()
	f.emit(
		asm.LoadMem(w0, task, int16(co), asm.DWord),
		asm.LoadMem(w1, task, int16(co+8), asm.DWord),
	)
	// t = the high bit of each zero byte of w0 (exact up to the first
	// zero byte, which is all that matters); m keeps the bytes up to it.
	hasNul := f.label("commnul")
	done := f.label("commdone")
	f.nulMask(w0, t, m)
	f.emit(asm.And.Reg(w0, m), asm.JNE.Imm(t, 0, hasNul))
	f.nulMask(w1, t, m)
	f.emit(asm.And.Reg(w1, m), asm.Ja.Label(done))
	f.mark(hasNul)
	f.emit(asm.Mov.Imm(w1, 0))
	f.mark(done)
	f.emit(
		asm.StoreMem(regScratch, int16(off), w0, asm.DWord),
		asm.StoreMem(regScratch, int16(off+8), w1, asm.DWord),
	)
	f.free(task)
	f.free(w0)
	f.free(w1)
	f.free(t)
	f.free(m)
}

// nulMask sets t to 0x80 in each byte of w that is the first zero byte
// (and possibly in later ones), 0 when w has no zero byte, and m to a
// mask of the bytes of w up to and including its first zero byte (all
// ones when there is none).
func (f *fn) nulMask(w, t, m asm.Register) {
	f.movImm(t, 0x0101010101010101)
	f.emit(asm.Mov.Reg(m, w), asm.Sub.Reg(m, t))                     // m = w - 0x01..
	f.emit(asm.Mov.Reg(t, w), asm.Xor.Imm(t, -1), asm.And.Reg(t, m)) // t = ~w & (w - 0x01..)
	f.movImm(m, -0x7f7f7f7f7f7f7f80)                                 // 0x8080808080808080
	f.emit(asm.And.Reg(t, m))
	// m = (lowest bit of t) << 1, minus 1: bits up to the first zero
	// byte's high bit; t == 0 gives all ones.
	f.emit(asm.Mov.Reg(m, t), asm.Neg.Imm(m, 0), asm.And.Reg(m, t), asm.LSh.Imm(m, 1), asm.Sub.Imm(m, 1))
}

// probeNameInto copies one of the probe's names, NUL-padded in its
// abi.ProbeNameSize bytes of the dt_probes value, to the key item at scratch
// offset off with plain loads (no helper call, no string scan). The item
// stays zero when the probe has no entry.
func (f *fn) probeNameInto(name string, off uint32) {
	ms := int16(f.g.layout.MState)
	key := f.tmp(8)
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+abi.MStatePrid, asm.Word), asm.StoreMem(regScratch, int16(key), asm.R0, asm.Word))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapProbes), scr(key))
	p := f.result()
	done := f.label("pnk")
	f.emit(asm.JEq.Imm(p, 0, done))
	base := probeNameOffset(name)
	t := f.alloc()
	for i := int16(0); i < abi.ProbeNameSize; i += 8 {
		f.emit(asm.LoadMem(t, p, base+i, asm.DWord), asm.StoreMem(regScratch, int16(off)+i, t, asm.DWord))
	}
	f.free(t)
	f.mark(done)
	f.free(p)
}
