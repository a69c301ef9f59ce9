package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// The user-stack unwinder (docs/STACKS.md). ustack(), jstack(), ucaller,
// ustackdepth and ustack() keys walk the stack by the call-frame
// information of each object, which the library compiles into tables
// (package unwind) and files in dt_uw_files/dt_uw_tables by the mapped
// file's identity. The call site reads the user registers the thread had
// when it entered the kernel (bpf_task_pt_regs: the registers a uprobe
// or a sample taken in user mode sees, and those of the system call a
// tracepoint fires in) and runs bpf_loop with dt_uwstep, one frame a
// step: it writes the PC, finds the PC's mapping with bpf_find_vma
// (dt_uwvma reads the VMA's file, inode and page offset; consecutive
// frames in one mapping reuse it), binary-searches the file's rows with a
// bounded, unrolled search, and applies the row: CFA from rsp or rbp (or
// the PLT expression), the return address at CFA-8, rbp where it was
// saved. A signal trampoline's row takes the interrupted registers from
// the ucontext on the stack; an undefined return address ends the stack.
// Where no table covers a PC (a file without CFI, an anonymous mapping,
// or a table not built yet, which is noted in dt_uw_miss for the library)
// the step follows the frame pointer.
//
// The unwinder's state lives in a block of scratch at a fixed offset
// (uwBlock), the only place both callbacks can reach: they get it through
// a pointer on the caller's stack, and dt_uwstep finds the scratch area's
// start from it to write the PCs at the call site's offset.
const (
	uwBlock = faultRecOff + abi.FaultRecordSize // 376

	uwIP    = 0   // u64 current frame's PC
	uwSP    = 8   // u64 its rsp
	uwBP    = 16  // u64 its rbp
	uwN     = 24  // u64 frames written
	uwMax   = 32  // u32 frames wanted
	uwOut   = 36  // u32 scratch offset of the PC array
	uwFlags = 40  // u64 uwExact, uwKRegs, uwURegs
	uwBX    = 48  // u64 the frame's rbx (0: unknown)
	uwMM    = 56  // u64 the process's mm_struct
	uwNow   = 64  // u64 bpf_ktime_get_ns() at the walk's start
	uwTable = 72  // u32 table index of the current mapping; 76 u32 its rows
	uwRows  = 76  //
	uwDev   = 80  // u64 the mapping's file: dev (dt_uw_files key) ...
	uwIno   = 88  // u64 ... and inode
	uwStart = 96  // u64 the mapping: vm_start (dt_uw_miss value) ...
	uwEnd   = 104 // u64 vm_end
	uwBase  = 112 // u64 file offset - address
	uwTgid  = 120 // u64 the process
	uwRegs  = 128 // u64 where every register of this frame is (uwKRegs, uwURegs)
	uwSize  = 136

	// uwFlags bits: the PC is exact, not a return address (the first
	// frame, and the frame a signal interrupted); uwRegs is the
	// kernel's pt_regs of the innermost frame; uwRegs is the user's
	// sigcontext of the frame a signal interrupted.
	uwExact = 1
	uwKRegs = 2
	uwURegs = 4
	// uwFrame masks the bits above, which each frame sets anew; the
	// others hold for the whole walk: uwLooked, the walk has called
	// bpf_find_vma, and at uwOldShift the offset in dt_uw_vmas's value
	// of a slot past abi.UWVMATTL that the walk used (0: none).
	uwFrame    = 7
	uwLooked   = 8
	uwOldShift = 16

	// dt_uwstep's stack: the block's address (bpf_find_vma's ctx), a
	// helper key or read buffer, the binary search's bounds.
	uwStkBlk = -8
	uwStkTmp = -16
	uwStkLo  = -24
	uwStkHi  = -32

	uwStepFunc = "dt_uwstep"
	uwVMAFunc  = "dt_uwvma"

	// uwSearchSteps bounds the binary search: 2^23 rows is more than
	// unwind.MaxRows.
	uwSearchSteps = 23
)

// The block must end before the output buffer.
var _ [OutputOffset - (uwBlock + uwSize)]struct{}

// uwKernel holds the kernel struct offsets dt_uwvma reads (from BTF).
type uwKernel struct {
	vmStart, vmEnd, vmPgoff, vmFile, vmMm, fInode, iIno, iSb, sDev, mmVdso, taskMM uint32
}

// cfiUnwind reports whether ustack() walks by CFI: the option asks for
// it and the kernel's BTF gives the offsets dt_uwvma needs.
func (g *gen) cfiUnwind() *uwKernel {
	if !g.opts.UStackCFI || g.opts.MemberOffset == nil {
		return nil
	}
	if g.uwk != nil {
		return g.uwk
	}
	k := &uwKernel{}
	for _, m := range []struct {
		dst          *uint32
		strct, field string
	}{
		{&k.vmStart, "vm_area_struct", "vm_start"}, {&k.vmEnd, "vm_area_struct", "vm_end"},
		{&k.vmPgoff, "vm_area_struct", "vm_pgoff"}, {&k.vmFile, "vm_area_struct", "vm_file"},
		{&k.vmMm, "vm_area_struct", "vm_mm"}, {&k.fInode, "file", "f_inode"},
		{&k.iIno, "inode", "i_ino"}, {&k.iSb, "inode", "i_sb"}, {&k.sDev, "super_block", "s_dev"},
		{&k.mmVdso, "mm_struct", "context.vdso"}, {&k.taskMM, "task_struct", "mm"},
	} {
		off, err := g.opts.MemberOffset(m.strct, m.field)
		if err != nil || off > 1<<15 {
			return nil
		}
		*m.dst = off
	}
	g.uwk = k
	return k
}

// ustackPCs writes the user stack's PCs, at most size bytes, at scratch
// offset off and returns a register holding the number of bytes written
// (negative on failure).
func (f *fn) ustackPCs(off uint32, size int64) asm.Register {
	if f.g.cfiUnwind() == nil {
		return f.ustackFP(off, size)
	}
	g := f.g
	g.uwOutEnd = max(g.uwOutEnd, off+uint32(size))
	for _, m := range []string{abi.MapUWFiles, abi.MapUWTables, abi.MapUWMiss, abi.MapUWVMAs} {
		g.useMap(m)
	}
	n := f.alloc()
	done := f.label("uwdone")
	b := int16(uwBlock)
	f.emit(asm.Mov.Imm(n, 0),
		storeImm(regScratch, b+uwN, 0, asm.DWord),
		storeImm(regScratch, b+uwMax, size/8, asm.Word),
		storeImm(regScratch, b+uwOut, int64(off), asm.Word),
		storeImm(regScratch, b+uwFlags, uwExact|uwKRegs, asm.DWord),
		storeImm(regScratch, b+uwStart, 0, asm.DWord),
		storeImm(regScratch, b+uwEnd, 0, asm.DWord))
	f.call(asm.FnGetCurrentPidTgid)
	f.emit(asm.RSh.Imm(asm.R0, 32), asm.StoreMem(regScratch, b+uwTgid, asm.R0, asm.DWord))
	f.call(asm.FnKtimeGetNs)
	f.emit(asm.StoreMem(regScratch, b+uwNow, asm.R0, asm.DWord))
	f.call(asm.FnGetCurrentTaskBtf)
	task := f.result()
	mm := f.alloc()
	f.emit(asm.LoadMem(mm, task, int16(g.uwk.taskMM), asm.DWord), asm.StoreMem(regScratch, b+uwMM, mm, asm.DWord))
	f.free(mm)
	f.call(asm.FnTaskPtRegs, reg(task))
	// A kernel thread, or a task without user registers, has no user
	// stack.
	t := f.alloc()
	f.emit(asm.LoadMem(t, asm.R0, abi.PtRegsCS, asm.DWord), asm.And.Imm(t, 3), asm.JNE.Imm(t, 3, done),
		asm.LoadMem(t, asm.R0, abi.PtRegsIP, asm.DWord), asm.StoreMem(regScratch, b+uwIP, t, asm.DWord),
		asm.LoadMem(t, asm.R0, abi.PtRegsSP, asm.DWord), asm.StoreMem(regScratch, b+uwSP, t, asm.DWord),
		asm.LoadMem(t, asm.R0, abi.PtRegsBP, asm.DWord), asm.StoreMem(regScratch, b+uwBP, t, asm.DWord),
		asm.LoadMem(t, asm.R0, abi.PtRegsBX, asm.DWord), asm.StoreMem(regScratch, b+uwBX, t, asm.DWord),
		// The other registers are read from there when a CFA rule
		// names one (kept as a number: it is read with
		// bpf_probe_read_kernel).
		asm.StoreMem(regScratch, b+uwRegs, asm.R0, asm.DWord))
	f.free(t)
	f.runLoop(uwStepFunc, uwBlock, imm(size/8))
	f.emit(asm.LoadMem(n, regScratch, b+uwN, asm.DWord), asm.LSh.Imm(n, 3))
	f.mark(done)
	return n
}

// uwStep builds dt_uwstep(index, ctx): one frame of the walk. It returns
// 1 when the walk ends, 0 to go on.
func (g *gen) uwStep() asm.Instructions {
	f := g.loopCallback(uwStepFunc)
	const (
		blk = asm.R6
		off = asm.R7 // file offset, then the row
		ip  = asm.R8
		aux = asm.R9 // PC looked up, then the inner map, then the CFA
	)
	stop, fp, have, miss := f.label("stop"), f.label("fp"), f.label("have"), f.label("miss")
	found, exact, findVMA, gotVMA := f.label("found"), f.label("exact"), f.label("findvma"), f.label("gotvma")
	// readUser reads the u64 at src+disp into the stack's tmp slot; on
	// failure it jumps to fail.
	readUser := func(src asm.Register, disp int32, fail string) {
		f.emit(asm.Mov.Reg(asm.R3, src))
		if disp != 0 {
			f.emit(asm.Add.Imm(asm.R3, disp))
		}
		f.emit(asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, uwStkTmp), asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadUser.Call(), asm.JNE.Imm(asm.R0, 0, fail))
	}
	f.emit(
		asm.StoreMem(asm.R10, uwStkBlk, blk, asm.DWord),
		asm.LoadMem(ip, blk, uwIP, asm.DWord), asm.JEq.Imm(ip, 0, stop),
		asm.LoadMem(asm.R1, blk, uwN, asm.DWord), asm.LoadMem(asm.R2, blk, uwMax, asm.Word),
		asm.JGE.Reg(asm.R1, asm.R2, stop),
		// Write the PC at scratch + out + 8n, bounded for the verifier
		// by the end of the furthest call site's array.
		asm.LoadMem(asm.R3, blk, uwOut, asm.Word), asm.Mov.Reg(asm.R4, asm.R1), asm.LSh.Imm(asm.R4, 3),
		asm.Add.Reg(asm.R3, asm.R4), asm.JGT.Imm(asm.R3, int32(g.uwOutEnd-8), stop),
		asm.Mov.Reg(asm.R4, blk), asm.Add.Reg(asm.R4, asm.R3), asm.StoreMem(asm.R4, -uwBlock, ip, asm.DWord),
		asm.Add.Imm(asm.R1, 1), asm.StoreMem(blk, uwN, asm.R1, asm.DWord),
		asm.JGE.Reg(asm.R1, asm.R2, stop),
		// The PC to look up: a return address is one past its call.
		asm.Mov.Reg(aux, ip), asm.LoadMem(asm.R1, blk, uwFlags, asm.DWord), asm.And.Imm(asm.R1, uwExact),
		asm.JNE.Imm(asm.R1, 0, exact), asm.Sub.Imm(aux, 1))
	f.mark(exact)
	f.emit(asm.LoadMem(asm.R1, blk, uwStart, asm.DWord), asm.JLT.Reg(aux, asm.R1, findVMA),
		asm.LoadMem(asm.R1, blk, uwEnd, asm.DWord), asm.JLT.Reg(aux, asm.R1, have))
	f.mark(findVMA)
	f.emit(storeImm(blk, uwStart, 0, asm.DWord), storeImm(blk, uwEnd, 0, asm.DWord),
		storeImm(blk, uwTable, 0, asm.DWord), storeImm(blk, uwDev, 0, asm.DWord), storeImm(blk, uwIno, 0, asm.DWord),
		// The mappings this CPU's walks found lately.
		storeImm(asm.R10, uwStkTmp, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWVMAs),
		asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, uwStkTmp),
		asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, fp),
		asm.Mov.Reg(off, asm.R0),
		asm.LoadMem(asm.R4, blk, uwTgid, asm.DWord), asm.LoadMem(asm.R5, blk, uwMM, asm.DWord))
	// A slot past its time is used as it is, and the walk renews it
	// when it ends (dt_uwstep's stop) if its lookup is left: where
	// interrupts are off (a profile probe) the kernel looks up one
	// mapping per interrupt (it releases the mmap lock from an
	// irq_work and refuses with EBUSY while that is pending), and that
	// one lookup goes to a mapping the cache does not have. Renewing
	// first would end the stack at the next mapping whenever two aged
	// out together, or every time on a CPU that samples the process
	// less often than abi.UWVMATTL.
	for i := range abi.UWVMAsN {
		e := int16(abi.UWVMAsFirst + i*abi.UWVMASize)
		next, old, use := f.label("vma"), f.label("old"), f.label("use")
		f.emit(asm.LoadMem(asm.R1, off, e+abi.UWVMATgid, asm.DWord), asm.JNE.Reg(asm.R1, asm.R4, next),
			asm.LoadMem(asm.R1, off, e+abi.UWVMAMM, asm.DWord), asm.JNE.Reg(asm.R1, asm.R5, next),
			asm.LoadMem(asm.R1, off, e+abi.UWVMAStart, asm.DWord), asm.JLT.Reg(aux, asm.R1, next),
			asm.LoadMem(asm.R1, off, e+abi.UWVMAEnd, asm.DWord), asm.JGE.Reg(aux, asm.R1, next),
			asm.LoadMem(asm.R1, off, e+abi.UWVMAStamp, asm.DWord), asm.LoadMem(asm.R2, blk, uwNow, asm.DWord),
			asm.Sub.Reg(asm.R2, asm.R1), asm.LoadImm(asm.R1, abi.UWVMATTL, asm.DWord), asm.JGT.Reg(asm.R2, asm.R1, old),
			asm.Ja.Label(use))
		f.mark(old)
		f.emit(asm.LoadMem(asm.R1, blk, uwFlags, asm.DWord), asm.Mov.Reg(asm.R2, asm.R1), asm.RSh.Imm(asm.R2, uwOldShift),
			asm.JNE.Imm(asm.R2, 0, use), asm.Or.Imm(asm.R1, int32(e)<<uwOldShift), asm.StoreMem(blk, uwFlags, asm.R1, asm.DWord))
		f.mark(use)
		for _, c := range [][2]int16{{abi.UWVMAStart, uwStart}, {abi.UWVMAEnd, uwEnd}, {abi.UWVMABase, uwBase},
			{abi.UWVMADev, uwDev}, {abi.UWVMAIno, uwIno}} {
			f.emit(asm.LoadMem(asm.R1, off, e+c[0], asm.DWord), asm.StoreMem(blk, c[1], asm.R1, asm.DWord))
		}
		f.emit(asm.Ja.Label(gotVMA))
		f.mark(next)
	}
	// Not there: ask the kernel (which may refuse a second time in one
	// interrupt), and keep what it says in the next slot.
	f.emit(asm.LoadMem(asm.R1, blk, uwFlags, asm.DWord), asm.Or.Imm(asm.R1, uwLooked), asm.StoreMem(blk, uwFlags, asm.R1, asm.DWord),
		asm.FnGetCurrentTaskBtf.Call(),
		asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Reg(asm.R2, aux),
		asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R3, Src: asm.PseudoFunc, Constant: -1}.WithReference(uwVMAFunc),
		asm.Mov.Reg(asm.R4, asm.R10), asm.Add.Imm(asm.R4, uwStkBlk), asm.Mov.Imm(asm.R5, 0),
		asm.FnFindVma.Call(), asm.JNE.Imm(asm.R0, 0, fp),
		asm.LoadMem(asm.R1, off, abi.UWVMAsNext, asm.DWord), asm.Mov.Reg(asm.R2, asm.R1), asm.Add.Imm(asm.R2, 1),
		asm.StoreMem(off, abi.UWVMAsNext, asm.R2, asm.DWord),
		asm.And.Imm(asm.R1, abi.UWVMAsN-1), asm.LSh.Imm(asm.R1, 6), asm.Add.Reg(asm.R1, off))
	for _, c := range [][2]int16{{abi.UWVMATgid, uwTgid}, {abi.UWVMAMM, uwMM}, {abi.UWVMAStart, uwStart},
		{abi.UWVMAEnd, uwEnd}, {abi.UWVMABase, uwBase}, {abi.UWVMADev, uwDev}, {abi.UWVMAIno, uwIno}, {abi.UWVMAStamp, uwNow}} {
		f.emit(asm.LoadMem(asm.R2, blk, c[1], asm.DWord), asm.StoreMem(asm.R1, abi.UWVMAsFirst+c[0], asm.R2, asm.DWord))
	}
	f.mark(gotVMA)
	f.emit(
		// An anonymous mapping (JIT code) has no table.
		asm.LoadMem(asm.R1, blk, uwIno, asm.DWord), asm.JEq.Imm(asm.R1, 0, fp),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWFiles),
		asm.Mov.Reg(asm.R2, blk), asm.Add.Imm(asm.R2, uwDev),
		asm.FnMapLookupElem.Call(), asm.JNE.Imm(asm.R0, 0, f.pendLabel("file")),
		// The $target's files are filed under any device too: stat
		// cannot always say which device the kernel maps a file from
		// (overlayfs).
		asm.LoadMem(off, blk, uwDev, asm.DWord), asm.LoadImm(asm.R1, abi.UWAnyDev, asm.DWord),
		asm.StoreMem(blk, uwDev, asm.R1, asm.DWord),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWFiles),
		asm.Mov.Reg(asm.R2, blk), asm.Add.Imm(asm.R2, uwDev),
		asm.FnMapLookupElem.Call(), asm.StoreMem(blk, uwDev, off, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, miss))
	f.markPending()
	f.emit(asm.LoadMem(asm.R1, asm.R0, abi.UWFileTable, asm.DWord), asm.StoreMem(blk, uwTable, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, blk, uwNow, asm.DWord), asm.StoreMem(asm.R0, abi.UWFileUsed, asm.R1, asm.DWord),
		asm.Ja.Label(have))
	f.mark(miss)
	// Tell the library which file to build a table for (once: the
	// entry stays until it has), and walk frame pointers meanwhile.
	f.emit(asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWMiss),
		asm.Mov.Reg(asm.R2, blk), asm.Add.Imm(asm.R2, uwDev),
		asm.Mov.Reg(asm.R3, blk), asm.Add.Imm(asm.R3, uwStart),
		asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
		asm.FnMapUpdateElem.Call(), asm.Ja.Label(fp))

	f.mark(have)
	f.emit(asm.LoadMem(asm.R1, blk, uwTable, asm.Word), asm.JEq.Imm(asm.R1, 0, fp),
		asm.StoreMem(asm.R10, uwStkTmp, asm.R1, asm.Word),
		asm.LoadMem(off, blk, uwBase, asm.DWord), asm.Add.Reg(off, aux),
		asm.Mov.Reg(asm.R1, off), asm.RSh.Imm(asm.R1, 32), asm.JNE.Imm(asm.R1, 0, fp),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWTables),
		asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, uwStkTmp),
		asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, fp),
		asm.Mov.Reg(aux, asm.R0),
		storeImm(asm.R10, uwStkLo, 0, asm.DWord),
		asm.LoadMem(asm.R1, blk, uwRows, asm.Word), asm.StoreMem(asm.R10, uwStkHi, asm.R1, asm.DWord))
	// The last row whose offset is <= off, in at most uwSearchSteps
	// lookups.
	for range uwSearchSteps {
		hi := f.label("hi")
		f.emit(asm.LoadMem(asm.R1, asm.R10, uwStkLo, asm.DWord), asm.LoadMem(asm.R2, asm.R10, uwStkHi, asm.DWord),
			asm.Mov.Reg(asm.R3, asm.R2), asm.Sub.Reg(asm.R3, asm.R1), asm.JLE.Imm(asm.R3, 1, found),
			asm.Add.Reg(asm.R1, asm.R2), asm.RSh.Imm(asm.R1, 1), asm.StoreMem(asm.R10, uwStkTmp, asm.R1, asm.Word),
			asm.Mov.Reg(asm.R1, aux), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, uwStkTmp),
			asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, fp),
			asm.LoadMem(asm.R1, asm.R0, abi.UWRowPC, asm.Word), asm.LoadMem(asm.R2, asm.R10, uwStkTmp, asm.Word),
			asm.JGT.Reg(asm.R1, off, hi),
			asm.StoreMem(asm.R10, uwStkLo, asm.R2, asm.DWord), asm.Ja.Label(f.pendLabel("next")))
		f.mark(hi)
		f.emit(asm.StoreMem(asm.R10, uwStkHi, asm.R2, asm.DWord))
		f.markPending()
	}
	f.mark(found)
	signal, notRSP, notRBP, notRBX, notReg, uregs := f.label("signal"), f.label("notrsp"), f.label("notrbp"), f.label("notrbx"), f.label("notreg"), f.label("uregs")
	cfa, rbx, setSP := f.label("cfa"), f.label("rbx"), f.label("setsp")
	f.emit(asm.LoadMem(asm.R1, asm.R10, uwStkLo, asm.DWord), asm.StoreMem(asm.R10, uwStkTmp, asm.R1, asm.Word),
		asm.Mov.Reg(asm.R1, aux), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, uwStkTmp),
		asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, fp),
		asm.LoadMem(asm.R1, asm.R0, abi.UWRowPC, asm.Word), asm.JGT.Reg(asm.R1, off, fp),
		asm.Mov.Reg(off, asm.R0),
		asm.LoadMem(asm.R1, off, abi.UWRowCFA, asm.Byte),
		asm.JEq.Imm(asm.R1, abi.UWCFAEnd, stop), asm.JEq.Imm(asm.R1, abi.UWCFASignal, signal),
		asm.JNE.Imm(asm.R1, abi.UWCFARSP, notRSP),
		asm.LoadMem(aux, blk, uwSP, asm.DWord), asm.Ja.Label(cfa))
	f.mark(notRSP)
	f.emit(asm.JNE.Imm(asm.R1, abi.UWCFARBP, notRBP),
		asm.LoadMem(aux, blk, uwBP, asm.DWord), asm.Ja.Label(cfa))
	f.mark(notRBP)
	f.emit(asm.JNE.Imm(asm.R1, abi.UWCFARBX, notRBX),
		asm.LoadMem(aux, blk, uwBX, asm.DWord), asm.JEq.Imm(aux, 0, fp), asm.Ja.Label(cfa))
	f.mark(notRBX)
	// Another register: known in the innermost frame (the kernel's
	// pt_regs) and in the frame a signal interrupted (its sigcontext).
	f.emit(asm.JNE.Imm(asm.R1, abi.UWCFAReg, notReg),
		asm.LoadMem(asm.R4, blk, uwFlags, asm.DWord),
		asm.LoadMem(asm.R3, off, abi.UWRowAux, asm.Half), asm.Mov.Reg(asm.R5, asm.R4), asm.And.Imm(asm.R5, uwKRegs),
		asm.JEq.Imm(asm.R5, 0, uregs),
		asm.And.Imm(asm.R3, 0xff), asm.LoadMem(asm.R1, blk, uwRegs, asm.DWord), asm.Add.Reg(asm.R3, asm.R1),
		asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, uwStkTmp), asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadKernel.Call(), asm.JNE.Imm(asm.R0, 0, fp),
		asm.LoadMem(aux, asm.R10, uwStkTmp, asm.DWord), asm.Ja.Label(cfa))
	f.mark(uregs)
	f.emit(asm.And.Imm(asm.R4, uwURegs), asm.JEq.Imm(asm.R4, 0, fp),
		asm.RSh.Imm(asm.R3, 8), asm.LoadMem(asm.R1, blk, uwRegs, asm.DWord), asm.Add.Reg(asm.R3, asm.R1),
		asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, uwStkTmp), asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadUser.Call(), asm.JNE.Imm(asm.R0, 0, fp),
		asm.LoadMem(aux, asm.R10, uwStkTmp, asm.DWord), asm.Ja.Label(cfa))
	f.mark(notReg)
	f.emit(asm.JNE.Imm(asm.R1, abi.UWCFAPLT, fp),
		// The PLT stub pushed a word once rip & 15 reaches aux.
		asm.LoadMem(aux, blk, uwSP, asm.DWord),
		asm.LoadMem(asm.R2, off, abi.UWRowAux, asm.Half), asm.Mov.Reg(asm.R3, ip), asm.And.Imm(asm.R3, 15),
		asm.JLT.Reg(asm.R3, asm.R2, cfa), asm.Add.Imm(aux, 8))
	f.mark(cfa)
	f.emit(asm.LoadMem(asm.R1, off, abi.UWRowCFAOff, asm.Word), asm.LSh.Imm(asm.R1, 32), asm.ArSh.Imm(asm.R1, 32),
		asm.Add.Reg(aux, asm.R1))
	readUser(aux, -8, stop)
	// The caller's rbp and rbx: unchanged, saved near the CFA, or
	// unknown (0). The row's regs byte holds rbp's rule in its low
	// nibble (nibble: and 15) and rbx's in its high one (rsh 4); at
	// says where the saved value is, from the CFA; slot is where it goes.
	saved := func(nibble asm.Instruction, at, slot int16, done string) {
		f.emit(asm.LoadMem(asm.R1, off, abi.UWRowRegs, asm.Byte), nibble, asm.JEq.Imm(asm.R1, abi.UWRBPSame, done),
			storeImm(blk, slot, 0, asm.DWord), asm.JNE.Imm(asm.R1, abi.UWRBPAt, done),
			asm.LoadMem(asm.R3, off, at, asm.Half), asm.LSh.Imm(asm.R3, 48), asm.ArSh.Imm(asm.R3, 48),
			asm.Add.Reg(asm.R3, aux))
		readUser(asm.R3, 0, done)
		f.emit(asm.LoadMem(asm.R1, asm.R10, uwStkTmp, asm.DWord), asm.StoreMem(blk, slot, asm.R1, asm.DWord))
		f.mark(done)
	}
	f.emit(asm.LoadMem(ip, asm.R10, uwStkTmp, asm.DWord))
	saved(asm.And.Imm(asm.R1, 15), abi.UWRowRBPOff, uwBP, rbx)
	saved(asm.RSh.Imm(asm.R1, 4), abi.UWRowRBXOff, uwBX, setSP)
	// The caller's frame is above this one; anything else is a loop.
	f.emit(asm.LoadMem(asm.R1, blk, uwSP, asm.DWord), asm.JLE.Reg(aux, asm.R1, stop),
		asm.StoreMem(blk, uwSP, aux, asm.DWord), asm.StoreMem(blk, uwIP, ip, asm.DWord))
	f.frameFlags(blk, 0)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())

	// A signal trampoline: rsp points at the ucontext the kernel saved
	// the interrupted registers in; the next PC is exact, and every
	// register of that frame is in the sigcontext.
	f.mark(signal)
	f.emit(asm.LoadMem(aux, blk, uwSP, asm.DWord))
	for _, c := range [][2]int32{{abi.UContextIP, uwIP}, {abi.UContextBP, uwBP}, {abi.UContextBX, uwBX}, {abi.UContextSP, uwSP}} {
		readUser(aux, c[0], stop)
		f.emit(asm.LoadMem(asm.R1, asm.R10, uwStkTmp, asm.DWord), asm.StoreMem(blk, int16(c[1]), asm.R1, asm.DWord))
	}
	f.emit(asm.Add.Imm(aux, abi.UContextMcontext), asm.StoreMem(blk, uwRegs, aux, asm.DWord))
	f.frameFlags(blk, uwExact|uwURegs)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())

	// No table: the frame pointer chain, rbp -> (saved rbp, return
	// address), while it stays above the stack pointer.
	f.mark(fp)
	f.emit(asm.LoadMem(aux, blk, uwBP, asm.DWord), asm.JEq.Imm(aux, 0, stop),
		asm.LoadMem(asm.R1, blk, uwSP, asm.DWord), asm.JLT.Reg(aux, asm.R1, stop))
	readUser(aux, 8, stop)
	f.emit(asm.LoadMem(ip, asm.R10, uwStkTmp, asm.DWord), storeImm(blk, uwBP, 0, asm.DWord), storeImm(blk, uwBX, 0, asm.DWord))
	readUser(aux, 0, f.pendLabel("fpbp"))
	f.emit(asm.LoadMem(asm.R1, asm.R10, uwStkTmp, asm.DWord), asm.StoreMem(blk, uwBP, asm.R1, asm.DWord))
	f.markPending()
	f.emit(asm.Add.Imm(aux, 16), asm.StoreMem(blk, uwSP, aux, asm.DWord), asm.StoreMem(blk, uwIP, ip, asm.DWord))
	f.frameFlags(blk, 0)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())

	// The walk ends. If it used a slot past its time and has not
	// called bpf_find_vma, it looks that mapping up again (from its
	// start) and renews the slot; a mapping that is gone empties it.
	end, renewed := f.label("end"), f.label("renewed")
	f.mark(stop)
	f.emit(asm.LoadMem(asm.R1, blk, uwFlags, asm.DWord), asm.Mov.Reg(asm.R2, asm.R1), asm.And.Imm(asm.R2, uwLooked),
		asm.JNE.Imm(asm.R2, 0, end),
		asm.RSh.Imm(asm.R1, uwOldShift), asm.JEq.Imm(asm.R1, 0, end),
		asm.JGT.Imm(asm.R1, abi.UWVMAsFirst+(abi.UWVMAsN-1)*abi.UWVMASize, end),
		asm.Mov.Reg(ip, asm.R1),
		storeImm(asm.R10, uwStkTmp, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(abi.MapUWVMAs),
		asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, uwStkTmp),
		asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, end),
		asm.Add.Reg(asm.R0, ip), asm.Mov.Reg(off, asm.R0),
		asm.LoadMem(aux, off, abi.UWVMAStart, asm.DWord),
		storeImm(blk, uwDev, 0, asm.DWord), storeImm(blk, uwIno, 0, asm.DWord),
		asm.FnGetCurrentTaskBtf.Call(),
		asm.Mov.Reg(asm.R1, asm.R0), asm.Mov.Reg(asm.R2, aux),
		asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R3, Src: asm.PseudoFunc, Constant: -1}.WithReference(uwVMAFunc),
		asm.Mov.Reg(asm.R4, asm.R10), asm.Add.Imm(asm.R4, uwStkBlk), asm.Mov.Imm(asm.R5, 0),
		asm.FnFindVma.Call(), asm.JEq.Imm(asm.R0, 0, renewed),
		asm.JNE.Imm(asm.R0, -2, end), // ENOENT: unmapped
		storeImm(off, abi.UWVMATgid, 0, asm.DWord), asm.Ja.Label(end))
	f.mark(renewed)
	for _, c := range [][2]int16{{abi.UWVMAStart, uwStart}, {abi.UWVMAEnd, uwEnd}, {abi.UWVMABase, uwBase},
		{abi.UWVMADev, uwDev}, {abi.UWVMAIno, uwIno}, {abi.UWVMAStamp, uwNow}} {
		f.emit(asm.LoadMem(asm.R2, blk, c[1], asm.DWord), asm.StoreMem(off, c[0], asm.R2, asm.DWord))
	}
	f.mark(end)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// frameFlags sets the per-frame bits of the block's flags (uwFrame) to
// bits, keeping the walk's.
func (f *fn) frameFlags(blk asm.Register, bits int32) {
	f.emit(asm.LoadMem(asm.R1, blk, uwFlags, asm.DWord), asm.And.Imm(asm.R1, ^uwFrame))
	if bits != 0 {
		f.emit(asm.Or.Imm(asm.R1, bits))
	}
	f.emit(asm.StoreMem(blk, uwFlags, asm.R1, asm.DWord))
}

// uwVMA builds dt_uwvma(task, vma, ctx), bpf_find_vma's callback: it
// copies the mapping's range, file offset base and file identity into the
// block (ctx points to a stack slot holding its address). The vdso,
// which has no file, is identified as (0, abi.UWVdsoIno); other
// anonymous mappings leave the inode 0.
func (g *gen) uwVMA() asm.Instructions {
	k := g.cfiUnwind()
	f := newFn(g, uwVMAFunc)
	const blk = asm.R6
	out, anon := f.label("out"), f.label("anon")
	f.emit(asm.LoadMem(blk, asm.R3, 0, asm.DWord).WithSymbol(uwVMAFunc).WithSource(asm.Comment(uwVMAFunc)),
		asm.LoadMem(asm.R1, asm.R2, int16(k.vmStart), asm.DWord), asm.StoreMem(blk, uwStart, asm.R1, asm.DWord),
		asm.LoadMem(asm.R4, asm.R2, int16(k.vmEnd), asm.DWord), asm.StoreMem(blk, uwEnd, asm.R4, asm.DWord),
		asm.LoadMem(asm.R4, asm.R2, int16(k.vmPgoff), asm.DWord), asm.LSh.Imm(asm.R4, 12), asm.Sub.Reg(asm.R4, asm.R1),
		asm.StoreMem(blk, uwBase, asm.R4, asm.DWord),
		asm.LoadMem(asm.R3, asm.R2, int16(k.vmFile), asm.DWord), asm.JEq.Imm(asm.R3, 0, anon),
		asm.LoadMem(asm.R3, asm.R3, int16(k.fInode), asm.DWord), asm.JEq.Imm(asm.R3, 0, out),
		asm.LoadMem(asm.R4, asm.R3, int16(k.iIno), asm.DWord), asm.StoreMem(blk, uwIno, asm.R4, asm.DWord),
		asm.LoadMem(asm.R3, asm.R3, int16(k.iSb), asm.DWord), asm.JEq.Imm(asm.R3, 0, out),
		asm.LoadMem(asm.R4, asm.R3, int16(k.sDev), asm.Word), asm.StoreMem(blk, uwDev, asm.R4, asm.DWord),
		asm.Ja.Label(out))
	f.mark(anon)
	f.emit(asm.LoadMem(asm.R3, asm.R2, int16(k.vmMm), asm.DWord), asm.JEq.Imm(asm.R3, 0, out),
		asm.LoadMem(asm.R4, asm.R3, int16(k.mmVdso), asm.DWord), asm.JNE.Reg(asm.R4, asm.R1, out),
		storeImm(blk, uwIno, abi.UWVdsoIno, asm.DWord),
		asm.Mov.Imm(asm.R4, 0), asm.Sub.Reg(asm.R4, asm.R1), asm.StoreMem(blk, uwBase, asm.R4, asm.DWord))
	f.mark(out)
	f.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	return f.insns
}

// ustackFP is the frame-pointer walk (bpf_get_stack), used where the
// CFI unwinder is off (other architectures, no BTF, -x ustackfp). Where
// the provider stored a return address the walk misses
// (abi.MStateUCaller: a pid probe before the function's frame is linked,
// whose walk goes from the probed PC straight to the caller's caller), it
// becomes the second frame, unless the kernel's unwinder already put it
// there (newer kernels do at a function's first instruction).
func (f *fn) ustackFP(off uint32, size int64) asm.Register {
	f.call(asm.FnGetStack, ctxOp(), scr(off), imm(size), imm(1<<8)) // BPF_F_USER_STACK
	n := f.result()
	if size <= 8 {
		return n
	}
	done := f.label("ustk")
	c, t := f.alloc(), f.alloc()
	f.emit(asm.JSLT.Imm(n, 0, done),
		asm.LoadMem(c, regScratch, int16(f.g.layout.MState)+abi.MStateUCaller, asm.DWord),
		asm.JEq.Imm(c, 0, done),
		asm.LoadMem(t, regScratch, int16(off+8), asm.DWord),
		asm.JEq.Reg(t, c, done))
	// Walk again one slot further, then move the probed PC back to the
	// first slot and put the caller in the second.
	f.call(asm.FnGetStack, ctxOp(), scr(off+8), imm(size-8), imm(1<<8))
	f.emit(asm.JSLT.Imm(asm.R0, 0, done),
		asm.Mov.Reg(n, asm.R0),
		asm.Add.Imm(n, 8),
		asm.LoadMem(t, regScratch, int16(off+8), asm.DWord),
		asm.StoreMem(regScratch, int16(off), t, asm.DWord),
		asm.LoadMem(c, regScratch, int16(f.g.layout.MState)+abi.MStateUCaller, asm.DWord),
		asm.StoreMem(regScratch, int16(off+8), c, asm.DWord))
	f.mark(done)
	f.free(c, t)
	return n
}
