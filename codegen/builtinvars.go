package codegen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles the builtin variables (arg0..9, timestamp, execname,
// curthread, uregs[], probe names, ...) by the generators varGens names,
// and `symbol addresses.

// builtin loads a builtin variable.
func (f *fn) builtin(e syntax.Expr, v *Var) asm.Register {
	g := varGenOf(v.Name)
	if g == nil || g.load == nil {
		f.fail(e, "builtin variable %s is not supported yet", v.Name)
	}
	r := g.load(f, e, v.Name)
	f.normalize(r, v.Type)
	return r
}

// varArg loads arg0 to arg9.
func (f *fn) varArg(_ syntax.Expr, name string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.readsArgs = true
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateArgs+8*int16(name[3]-'0'), asm.DWord))
	return r
}

// varID loads id.
func (f *fn) varID(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStatePrid, asm.Word))
	return r
}

// varEpid loads epid.
func (f *fn) varEpid(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateEPID, asm.Word))
	return r
}

// varTimestamp loads timestamp, vtimestamp.
func (f *fn) varTimestamp(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	l := f.label("ts")
	f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateTimestamp, asm.DWord), asm.JNE.Imm(r, 0, l))
	f.free(r)
	f.call(asm.FnKtimeGetNs)
	f.emit(asm.StoreMem(regScratch, ms+abi.MStateTimestamp, asm.R0, asm.DWord))
	f.used[r] = true
	f.emit(asm.Mov.Reg(r, asm.R0))
	f.mark(l)
	return r
}

// varWalltimestamp loads walltimestamp: CLOCK_TAI less the kernel's TAI
// offset, read when the program is compiled.
func (f *fn) varWalltimestamp(_ syntax.Expr, _ string) asm.Register {
	f.call(asm.FnKtimeGetTaiNs)
	r := f.result()
	if off := taiOffset(); off != 0 {
		f.emit(asm.LoadImm(asm.R0, off, asm.DWord), asm.Sub.Reg(r, asm.R0))
	}
	return r
}

// varPpid loads ppid.
func (f *fn) varPpid(e syntax.Expr, _ string) asm.Register {
	r, ok := f.taskMember("psinfo_t", "pr_ppid")
	if !ok {
		f.fail(e, "builtin variable ppid needs the D library's psinfo_t translator")
	}
	return r
}

// cgroupMember loads a builtin that the D library's cgroupinfo_t
// translator (container.d) gives of curthread: zonename, cgroupid.
func cgroupMember(member, name string) func(*fn, syntax.Expr, string) asm.Register {
	return func(f *fn, e syntax.Expr, _ string) asm.Register {
		r, ok := f.taskMember("cgroupinfo_t", member)
		if !ok {
			f.fail(e, "builtin variable %s needs the D library's cgroupinfo_t translator", name)
		}
		return r
	}
}

// subrCgrouppath compiles cgrouppath(): the path of zonename's cgroup.
func (f *fn) subrCgrouppath(c *syntax.CallExpr, _ string) asm.Register {
	r, ok := f.taskMember("cgroupinfo_t", "cg_path")
	if !ok {
		f.fail(c, "cgrouppath() needs the D library's cgroupinfo_t translator")
	}
	return r
}

// halfOf loads one half of what helper returns: the low 32 bits if low
// (tid of bpf_get_current_pid_tgid, uid of bpf_get_current_uid_gid), else
// the high ones (pid, gid).
func halfOf(helper asm.BuiltinFunc, low bool) func(*fn, syntax.Expr, string) asm.Register {
	return func(f *fn, _ syntax.Expr, _ string) asm.Register {
		f.call(helper)
		r := f.result()
		if low {
			f.emit(asm.Mov.Reg32(r, r))
		} else {
			f.emit(asm.RSh.Imm(r, 32))
		}
		return r
	}
}

// varCurthread loads curthread.
func (f *fn) varCurthread(_ syntax.Expr, _ string) asm.Register {
	f.call(asm.FnGetCurrentTask)
	return f.result()
}

// varExecname loads execname.
func (f *fn) varExecname(_ syntax.Expr, _ string) asm.Register {
	off := f.tmp(f.g.strBuf())
	f.call(asm.FnGetCurrentComm, scr(off), imm(16))
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// varErrno loads errno.
func (f *fn) varErrno(_ syntax.Expr, _ string) asm.Register {
	r := f.alloc()
	// The provider's prologue leaves errno in mstate (0 where the
	// probe has none).
	f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+abi.MStateErrno, asm.DWord))
	return r
}

// varIpl loads ipl.
func (f *fn) varIpl(_ syntax.Expr, _ string) asm.Register {
	return f.zero()
}

// varUregs fails: uregs[] is only indexed (uregs).
func (f *fn) varUregs(e syntax.Expr, _ string) asm.Register {
	f.fail(e, "uregs[] must be indexed")
	return 0
}

// varCaller loads caller, ucaller.
func (f *fn) varCaller(_ syntax.Expr, name string) asm.Register {
	// The second frame of the kernel or user stack (the first is
	// the probed location itself), 0 when there is none.
	off := f.tmp(16)
	f.emit(storeImm(regScratch, int16(off), 0, asm.DWord), storeImm(regScratch, int16(off+8), 0, asm.DWord))
	if name == "ucaller" {
		f.free(f.ustackPCs(off, 16))
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(off), imm(16), imm(0))
	}
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, int16(off+8), asm.DWord))
	return r
}

// varStackdepth loads stackdepth, ustackdepth.
func (f *fn) varStackdepth(_ syntax.Expr, name string) asm.Register {
	ms := int16(f.g.layout.MState)
	// The number of frames bpf_get_stack finds (0 on failure).
	depth := f.g.maxFrames(stackMaxDepth)
	off := f.tmp(uint32(depth * 8))
	var r asm.Register
	if name == "ustackdepth" {
		r = f.ustackPCs(off, depth*8)
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(off), imm(depth*8), imm(0))
		r = f.result()
	}
	l, zero := f.label("sd"), f.label("sdz")
	f.emit(asm.JSLT.Imm(r, 0, zero), asm.RSh.Imm(r, 3))
	if name == "stackdepth" {
		// BEGIN and END fire in the consumer: no kernel stack.
		p := f.alloc()
		f.emit(asm.LoadMem(p, regScratch, ms+abi.MStatePrid, asm.Word), asm.JLE.Imm(p, abi.ProbeEnd, zero))
		f.free(p)
	}
	f.emit(asm.Ja.Label(l))
	f.mark(zero)
	f.emit(asm.Mov.Imm(r, 0))
	f.mark(l)
	return r
}

// varCurcpu loads curcpu.
func (f *fn) varCurcpu(_ syntax.Expr, _ string) asm.Register {
	ms := int16(f.g.layout.MState)
	// A cpuinfo_t built in this CPU's mstate (doc.go).
	f.call(asm.FnGetSmpProcessorId)
	f.emit(asm.StoreMem(regScratch, ms+msCPUInfo, asm.R0, asm.Word),
		storeImm(regScratch, ms+msCPUInfo+4, 0, asm.Word))
	f.call(asm.FnGetNumaNodeId)
	f.emit(asm.StoreMem(regScratch, ms+msCPUInfo+8, asm.R0, asm.Word),
		asm.StoreMem(regScratch, ms+msCPUInfo+12, asm.R0, asm.Word))
	r := f.alloc()
	f.scratchPtr(r, uint32(ms+msCPUInfo))
	return r
}

// varProbeName loads probeprov, probemod, probefunc, probename.
func (f *fn) varProbeName(_ syntax.Expr, name string) asm.Register {
	return f.probeName(name)
}

// argsIndex compiles args[i]: the translation of the probe's argument i
// when its provider translates them, else mstate arg i.
func (f *fn) argsIndex(e *syntax.IndexExpr) asm.Register {
	if r, ok := f.xlateWhole(e, f.typeOf(e)); ok {
		return r
	}
	return f.argLoad(e, f.typeOf(e))
}

// argLoad loads args[i] (untranslated) as a value of type t.
func (f *fn) argLoad(e *syntax.IndexExpr, t *program.Type) asm.Register {
	i, ok := f.constant(e.Index[0])
	if !ok || i < 0 || i > 9 {
		f.fail(e, "args[] index must be a constant from 0 to 9")
	}
	r := f.alloc()
	f.readsArgs = true
	f.emit(asm.LoadMem(r, regScratch, int16(f.g.layout.MState)+abi.MStateArgs+8*int16(i), asm.DWord))
	f.normalize(r, t)
	return r
}

// probeName returns the probe's provider/module/function/name string,
// which the loader stores per probe id in dt_probes.
func (f *fn) probeName(name string) asm.Register {
	ms := int16(f.g.layout.MState)
	key := f.tmp(8)
	f.emit(asm.LoadMem(asm.R0, regScratch, ms+abi.MStatePrid, asm.Word), asm.StoreMem(regScratch, int16(key), asm.R0, asm.Word))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapProbes), scr(key))
	r := f.alloc()
	found, done := f.label("pn"), f.label("pnend")
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.emptyStr(r)
	f.emit(asm.Ja.Label(done))
	f.mark(found)
	f.emit(asm.Mov.Reg(r, asm.R0), asm.Add.Imm(r, int32(probeNameOffset(name))))
	f.mark(done)
	return r
}

// probeNameOffset is the offset of a probe name builtin's string in a
// dt_probes value.
func probeNameOffset(name string) int16 {
	switch name {
	case "probemod":
		return abi.ProbeNameSize
	case "probefunc":
		return 2 * abi.ProbeNameSize
	case "probename":
		return 3 * abi.ProbeNameSize
	}
	return 0
}

// maxFrames returns depth reduced to the maxframes option.
func (g *gen) maxFrames(depth int64) int64 {
	if m := g.opts.MaxFrames; m > 0 && depth > m {
		return m
	}
	return depth
}

// stackMaxDepth is the deepest stack stackdepth counts (the kernel's
// default perf_event_max_stack).
const stackMaxDepth = 127

// ptRegsWords is the number of u64 words of x86-64's struct pt_regs,
// whose order uregs[] indexes (regs-amd64.d's R_* constants).
const ptRegsWords = 21

// uregs compiles uregs[i]: word i of the current task's user registers
// (bpf_task_pt_regs); indexes past pt_regs (the segment registers kept
// in the task's thread) read 0; beyond R_TRAPNO the index faults.
func (f *fn) uregs(e *syntax.IndexExpr) asm.Register {
	i := f.expr(e.Index[0])
	ok, bad, zero, done := f.label("ur"), f.label("urbad"), f.label("urz"), f.label("urend")
	f.emit(asm.JGT.Imm(i, 25, bad), asm.JGE.Imm(i, ptRegsWords, zero), asm.Ja.Label(ok))
	f.mark(bad)
	f.fault(abi.FltBadIndex, i, true)
	f.mark(ok)
	hi := f.hold(i, nil)
	f.call(asm.FnGetCurrentTaskBtf)
	t := f.result()
	f.call(asm.FnTaskPtRegs, reg(t))
	p := f.result()
	f.launder(p)
	i = f.release(hi)
	f.emit(asm.LSh.Imm(i, 3), asm.Add.Reg(p, i))
	f.free(i)
	v := f.loadScalar(p, program.TypeULong, false)
	f.emit(asm.Ja.Label(done))
	f.mark(zero)
	f.emit(asm.Mov.Imm(v, 0))
	f.mark(done)
	return v
}

// symbolAddr sets a register to the address of kernel symbol v. A
// symbol the link policy leaves unresolved is refused as dtrace refuses
// a relocation that remains (D_ASRELO), naming the byte offset of the
// instruction that would carry it.
func (f *fn) symbolAddr(n syntax.Node, v *Var) asm.Register {
	link := f.g.opts.Link
	if link == LinkDynamic || link == LinkPrimary && v.Module != "vmlinux" {
		mod := v.Module
		if mod == "" {
			mod = "vmlinux"
		}
		off := uint64(0)
		for _, ins := range f.insns {
			off += ins.Size()
		}
		f.bail(&Error{Pos: n.Pos(), Tag: "D_ASRELO",
			Err: fmt.Errorf("relocation remains against kernel symbol %s`%s (offset 0x%x)", mod, v.Name, off)})
	}
	r := f.alloc()
	f.movImm(r, v.Value)
	return r
}
