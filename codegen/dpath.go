package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// d_path(struct path *) is the path of a file as the kernel's d_path()
// writes it (what readlink(2) of /proc/PID/fd/N shows): the dentry's
// names up to the root of its mount, then the mount point's names in the
// parent mount, and so on up to the root of the mount namespace, with
// " (deleted)" after an unlinked file. The process's root (chroot) is not
// consulted, and names the kernel makes up for pseudo files (d_dname:
// "pipe:[N]", "socket:[N]", "anon_inode:...") are not: those give the
// dentry's own name. bpf_d_path would do all this but only from a few
// allow-listed attach points, so the walk is done here with the kernel's
// struct offsets from BTF.
//
// The call site reads path->mnt and path->dentry (faulting loads, so a bad
// pointer is an invalid address at it) and runs bpf_loop with the callback
// dt_dpath, one step per name or mount crossing. Names are written
// backwards from the end of a buffer in the call site's block; the result
// is then copied to the start of a string temporary.
const (
	dpDentry = 0  // current dentry
	dpMount  = 8  // current struct mount *
	dpPos    = 16 // where the path written so far starts in the buffer
	dpBad    = 24 // address of a failed read, with dpStatus 1
	dpStatus = 32 // 0 walking, 1 a read failed, 2 out of room
	dpStart  = 40 // dpPos before the walk (after " (deleted)")
	dpTmp    = 48 // 16 bytes the reads land in (a struct qstr)
	dpBuf    = 64
	dpName   = 256 // the most bytes of one name (NAME_MAX + 1)
	dpFunc   = "dt_dpath"
	// dpDeleted is what follows the path of an unlinked file.
	dpDeleted = " (deleted)"
)

// dpathOffsets are the kernel's struct offsets the walk uses.
type dpathOffsets struct {
	pathMnt, pathDentry     uint32
	dParent, dName, dHash   uint32
	qstrName                uint32
	mntRoot                 uint32 // vfsmount.mnt_root
	mountMnt                uint32 // mount.mnt (the embedded vfsmount)
	mountParent, mountPoint uint32
	hlistPprev              uint32
}

// dpathBlock returns the size of a call site's block for the program's
// strsize: the header, the buffer, and room past it for a name.
func (g *gen) dpathBlock() uint32 { return dpBuf + align8(g.opts.StrSize) + dpName }

// dpathOffsets looks up the offsets d_path() needs in the kernel's BTF.
func (f *fn) dpathOffsets(c *syntax.CallExpr) dpathOffsets {
	mo := f.g.opts.MemberOffset
	if mo == nil {
		f.fail(c, "d_path( ) needs the kernel's type information")
	}
	var o dpathOffsets
	for _, m := range []struct {
		s, m string
		dst  *uint32
	}{
		{"path", "mnt", &o.pathMnt}, {"path", "dentry", &o.pathDentry},
		{"dentry", "d_parent", &o.dParent}, {"dentry", "d_name", &o.dName}, {"dentry", "d_hash", &o.dHash},
		{"qstr", "name", &o.qstrName}, {"vfsmount", "mnt_root", &o.mntRoot},
		{"mount", "mnt", &o.mountMnt}, {"mount", "mnt_parent", &o.mountParent}, {"mount", "mnt_mountpoint", &o.mountPoint},
		{"hlist_bl_node", "pprev", &o.hlistPprev},
	} {
		v, err := mo(m.s, m.m)
		if err != nil {
			f.fail(c, "d_path( ) needs struct %s of the kernel: %v", m.s, err)
		}
		*m.dst = v
	}
	if o.qstrName != 8 {
		// The walk reads qstr's u32 hash, u32 len, then name.
		f.fail(c, "d_path( ) does not know this kernel's struct qstr (name at %d)", o.qstrName)
	}
	return o
}

// dpathCallback builds dt_dpath(index, ctx): ctx points to a stack slot
// holding the block's address. A step either prepends "/name" of the
// current dentry and moves to its parent, or, at the root of a mount,
// moves to the mount point in the parent mount; it returns 1 (stop) at
// the namespace's root mount, on a failed read or when the buffer is full.
func (g *gen) dpathCallback(o dpathOffsets) asm.Instructions {
	size := int32(g.opts.StrSize)
	f := newFn(g, dpFunc)
	// The block, the dentry, the mount, what a read loaded.
	blk, d, m, t := asm.R6, asm.R7, asm.R8, asm.R9
	up, stop, bad, full := f.label("up"), f.label("stop"), f.label("bad"), f.label("full")
	// read loads the u64 at src+off into t, or stops the walk.
	read := func(src asm.Register, off uint32) {
		f.emit(asm.Mov.Reg(asm.R3, src), asm.Add.Imm(asm.R3, int32(off)),
			asm.StoreMem(blk, dpBad, asm.R3, asm.DWord),
			asm.Mov.Reg(asm.R1, blk), asm.Add.Imm(asm.R1, dpTmp), asm.Mov.Imm(asm.R2, 8),
			asm.FnProbeReadKernel.Call(), asm.JNE.Imm(asm.R0, 0, bad),
			asm.LoadMem(t, blk, dpTmp, asm.DWord))
	}
	f.emit(
		asm.LoadMem(blk, asm.R2, 0, asm.DWord).WithSymbol(dpFunc).WithSource(asm.Comment(dpFunc)),
		asm.LoadMem(d, blk, dpDentry, asm.DWord),
		asm.LoadMem(m, blk, dpMount, asm.DWord),
	)
	// At the root of the mount, or of a disconnected tree: cross up.
	read(m, o.mountMnt+o.mntRoot)
	f.emit(asm.JEq.Reg(d, t, up))
	read(d, o.dParent)
	f.emit(asm.JEq.Reg(d, t, up), asm.StoreMem(blk, dpDentry, t, asm.DWord))
	// Prepend '/' and the name: qstr's hash and len (u32 each), then name.
	f.emit(asm.Mov.Reg(asm.R3, d), asm.Add.Imm(asm.R3, int32(o.dName)),
		asm.StoreMem(blk, dpBad, asm.R3, asm.DWord),
		asm.Mov.Reg(asm.R1, blk), asm.Add.Imm(asm.R1, dpTmp), asm.Mov.Imm(asm.R2, 16),
		asm.FnProbeReadKernel.Call(), asm.JNE.Imm(asm.R0, 0, bad),
		asm.LoadMem(d, blk, dpTmp+4, asm.Word), // len
		asm.JGE.Imm(d, dpName, full),
		asm.LoadMem(t, blk, dpPos, asm.DWord),
		asm.Sub.Reg(t, d), asm.Sub.Imm(t, 1),
		asm.JSLT.Imm(t, 0, full), asm.JSGE.Imm(t, size, full),
		asm.StoreMem(blk, dpPos, t, asm.DWord),
		asm.Mov.Reg(asm.R1, blk), asm.Add.Reg(asm.R1, t),
		storeImm(asm.R1, dpBuf, '/', asm.Byte),
		asm.Add.Imm(asm.R1, dpBuf+1), asm.Mov.Reg(asm.R2, d),
		asm.LoadMem(asm.R3, blk, int16(dpTmp+o.qstrName), asm.DWord),
		asm.StoreMem(blk, dpBad, asm.R3, asm.DWord),
		asm.FnProbeReadKernel.Call(), asm.JNE.Imm(asm.R0, 0, bad),
		asm.Mov.Imm(asm.R0, 0), asm.Return(),
	)
	f.mark(up)
	// The mount's parent; the namespace's root mount is its own.
	read(m, o.mountParent)
	f.emit(asm.JEq.Reg(t, m, stop), asm.JEq.Imm(t, 0, stop), asm.StoreMem(blk, dpMount, t, asm.DWord))
	read(m, o.mountPoint)
	f.emit(asm.StoreMem(blk, dpDentry, t, asm.DWord), asm.Mov.Imm(asm.R0, 0), asm.Return())
	f.mark(bad)
	f.emit(storeImm(blk, dpStatus, 1, asm.DWord), asm.Ja.Label(stop))
	f.mark(full)
	f.emit(storeImm(blk, dpStatus, 2, asm.DWord))
	f.mark(stop)
	f.emit(asm.Mov.Imm(asm.R0, 1), asm.Return())
	return f.insns
}

// subrDPath compiles d_path(p).
func (f *fn) subrDPath(c *syntax.CallExpr, _ string) asm.Register {
	g := f.g
	o := f.dpathOffsets(c)
	g.needFunc(dpFunc, func() asm.Instructions { return g.dpathCallback(o) })
	size := int32(g.opts.StrSize)
	blk := f.tmp(g.dpathBlock())
	ld := func(off uint32) asm.Register {
		r := f.alloc()
		f.emit(asm.LoadMem(r, regScratch, int16(blk+off), asm.DWord))
		return r
	}
	p := f.onlyArg(c)
	f.convert(p, f.typeOf(c.Args[0]), program.TypeULong)
	f.emit(asm.StoreMem(regScratch, int16(blk+dpTmp), p, asm.DWord))
	f.free(p)
	// path->mnt and path->dentry, in member order, so that a bad pointer
	// faults at its own address.
	first, second := [2]uint32{o.pathMnt, dpMount}, [2]uint32{o.pathDentry, dpDentry}
	if o.pathDentry < o.pathMnt {
		first, second = second, first
	}
	for _, m := range [2][2]uint32{first, second} {
		p = ld(dpTmp)
		f.emit(asm.Add.Imm(p, int32(m[0])))
		v := f.loadScalar(p, program.TypeULong, false)
		if m[1] == dpMount {
			f.emit(asm.Sub.Imm(v, int32(o.mountMnt))) // container_of
		}
		f.emit(asm.StoreMem(regScratch, int16(blk+m[1]), v, asm.DWord))
		f.free(v)
	}
	// An unlinked file (unhashed, not a root) ends in " (deleted)".
	live, walk := f.label("dplive"), f.label("dpwalk")
	d := ld(dpDentry)
	f.emit(asm.Add.Imm(d, int32(o.dHash+o.hlistPprev)))
	v := f.loadScalar(d, program.TypeULong, false)
	f.emit(asm.JNE.Imm(v, 0, live))
	f.free(v)
	d = ld(dpDentry)
	f.emit(asm.Add.Imm(d, int32(o.dParent)))
	v = f.loadScalar(d, program.TypeULong, false)
	d = ld(dpDentry)
	f.emit(asm.JEq.Reg(v, d, live))
	f.free(v, d)
	if tail := size - int32(len(dpDeleted)); tail > 0 {
		for i := range int32(len(dpDeleted)) {
			f.emit(storeImm(regScratch, int16(int32(blk+dpBuf)+tail+i), int64(dpDeleted[i]), asm.Byte))
		}
		f.emit(storeImm(regScratch, int16(blk+dpPos), int64(tail), asm.DWord), asm.Ja.Label(walk))
	}
	f.mark(live)
	f.emit(storeImm(regScratch, int16(blk+dpPos), int64(size), asm.DWord))
	f.mark(walk)
	r := ld(dpPos)
	f.emit(asm.StoreMem(regScratch, int16(blk+dpStart), r, asm.DWord), storeImm(regScratch, int16(blk+dpStatus), 0, asm.DWord),
		asm.Mov.Reg(r, regScratch), asm.Add.Imm(r, int32(blk)), asm.StoreMem(asm.R10, stackMisc, r, asm.DWord))
	f.free(r)
	f.call(asm.FnLoop, imm(int64(size)+64), operand{kind: opFunc, name: dpFunc}, operand{kind: opStack, imm: stackMisc}, imm(0))
	ok := f.label("dpok")
	st := ld(dpStatus)
	f.emit(asm.JNE.Imm(st, 1, ok), asm.LoadMem(st, regScratch, int16(blk+dpBad), asm.DWord))
	f.fault(abi.FltBadAddr, st, true)
	f.mark(ok)
	f.free(st)
	// Nothing but the root: "/" (before " (deleted)", if any).
	w, start := ld(dpPos), ld(dpStart)
	some := f.label("dpsome")
	f.emit(asm.JNE.Reg(w, start, some), asm.Sub.Imm(w, 1), asm.JSLT.Imm(w, 0, some), asm.JSGE.Imm(w, size, some),
		asm.StoreMem(regScratch, int16(blk+dpPos), w, asm.DWord),
		asm.Mov.Reg(start, regScratch), asm.Add.Reg(start, w), storeImm(start, int16(blk+dpBuf), '/', asm.Byte))
	f.mark(some)
	f.free(w, start)
	// Copy buf[pos:size] to the result and end it.
	out := f.tmp(g.strBuf())
	empty, done := f.label("dpempty"), f.label("dpdone")
	n, src := f.alloc(), ld(dpPos)
	f.emit(asm.JSLT.Imm(src, 0, empty), asm.JSGE.Imm(src, size, empty), asm.Mov.Imm(n, size), asm.Sub.Reg(n, src),
		asm.StoreMem(regScratch, int16(blk+dpStart), n, asm.DWord),
		asm.Add.Reg(src, regScratch), asm.Add.Imm(src, int32(blk+dpBuf)))
	f.call(asm.FnProbeReadKernel, scr(out), reg(n), reg(src))
	n = ld(dpStart)
	f.emit(asm.JSLE.Imm(n, 0, empty), asm.JSGT.Imm(n, size, empty),
		asm.Add.Reg(n, regScratch), storeImm(n, int16(out), 0, asm.Byte), asm.Ja.Label(done))
	f.free(n)
	f.mark(empty)
	f.emit(storeImm(regScratch, int16(out), 0, asm.Byte))
	f.mark(done)
	return f.strResult(out)
}
