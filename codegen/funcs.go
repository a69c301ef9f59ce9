package codegen

import (
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles subroutines: calls that compute a value in the
// probe context. Strings are produced in scratch temporaries.

// subrRand compiles rand().
func (f *fn) subrRand(c *syntax.CallExpr, _ string) asm.Register {
	f.call(asm.FnGetPrandomU32)
	r := f.result()
	f.normalize(r, program.TypeInt)
	return r
}

// subrSpeculation compiles speculation().
func (f *fn) subrSpeculation(c *syntax.CallExpr, _ string) asm.Register {
	return f.speculation()
}

// subrProgenyof compiles progenyof().
func (f *fn) subrProgenyof(c *syntax.CallExpr, _ string) asm.Register {
	return f.progenyof(c, f.onlyArg(c))
}

// subrStrlen compiles strlen().
func (f *fn) subrStrlen(c *syntax.CallExpr, _ string) asm.Register {
	s := f.onlyArg(c)
	return f.strlen(s)
}

// subrStrjoin compiles strjoin(), strtok().
func (f *fn) subrStrjoin(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 2, 2)
	a := f.evalArgs(c, 2)
	if name == "strtok" {
		return f.strtok(a[0], a[1])
	}
	return f.strjoin(a[0], a[1])
}

// subrCopyinstr compiles copyinstr().
func (f *fn) subrCopyinstr(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 2)
	if len(c.Args) == 1 {
		return f.copyStr(f.expr(c.Args[0]), true)
	}
	a := f.evalArgs(c, 2)
	return f.copyStrMax(a[0], a[1])
}

// subrCopyin compiles copyin().
func (f *fn) subrCopyin(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 2, 2)
	n, ok := f.constant(c.Args[1])
	if !ok || n <= 0 || n > 4096 {
		f.fail(c.Args[1], "copyin( ) size must be a constant from 1 to 4096")
	}
	a := f.expr(c.Args[0])
	// The copy is alloca() memory: it lives until the clause ends.
	off := f.allocaTake(uint32(n))
	f.readInto(a, off, uint32(n), true)
	p := f.alloc()
	f.scratchPtr(p, off)
	return p
}

// subrAlloca compiles alloca().
func (f *fn) subrAlloca(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 1)
	n, ok := f.constant(c.Args[0])
	if !ok || n < 0 || n > 4096 {
		f.fail(c.Args[0], "alloca( ) size must be a constant up to 4096")
	}
	// alloca(0) takes no room: it returns where the next one starts.
	off := f.allocaTake(uint32(n))
	p := f.alloc()
	f.scratchPtr(p, off)
	return p
}

// subrBcopy compiles bcopy().
func (f *fn) subrBcopy(c *syntax.CallExpr, _ string) asm.Register {
	// bcopy(src, alloca'd dest, size).
	f.need(c, 3, 3)
	a := f.evalArgs(c, 3)
	// A string source is a value, not memory the program allocated.
	f.copyToAlloca(a[0], a[1], a[2], false, f.typeOf(c.Args[0]).Kind != program.TString)
	return f.zero()
}

// subrCopyinto compiles copyinto().
func (f *fn) subrCopyinto(c *syntax.CallExpr, _ string) asm.Register {
	// copyinto(user addr, size, alloca'd dest).
	f.need(c, 3, 3)
	a := f.evalArgs(c, 3)
	f.copyToAlloca(a[0], a[2], a[1], true, false)
	return f.zero()
}

// evalArgs evaluates the first n arguments of a call, in order, into
// registers; each value is held (stashed if need be) while the next
// arguments are evaluated.
func (f *fn) evalArgs(c *syntax.CallExpr, n int) []asm.Register {
	hs := make([]held, n-1)
	for i := range hs {
		hs[i] = f.hold(f.expr(c.Args[i]), c.Args[i+1])
	}
	r := make([]asm.Register, n)
	r[n-1] = f.expr(c.Args[n-1])
	for i := n - 2; i >= 0; i-- {
		r[i] = f.release(hs[i])
	}
	return r
}

// zero returns a new register holding 0: the value of a void call.
func (f *fn) zero() asm.Register {
	r := f.alloc()
	f.emit(asm.Mov.Imm(r, 0))
	return r
}

// subrLltostr compiles lltostr().
func (f *fn) subrLltostr(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 2)
	if b, ok := f.constantArg(c, 1, 10); ok && b == 10 {
		v := f.expr(c.Args[0])
		f.convert(v, f.typeOf(c.Args[0]), program.TypeLong)
		return f.lltostr(v)
	}
	v, base := f.withBase(c)
	f.convert(v, f.typeOf(c.Args[0]), program.TypeLong)
	return f.lltostrBase(v, base)
}

// subrByteOrder compiles htons(), ntohs(), htonl(), ntohl(), htonll(), ntohll().
func (f *fn) subrByteOrder(c *syntax.CallExpr, name string) asm.Register {
	// Network order is big-endian; these machines are little-endian.
	r := f.onlyArg(c)
	size := map[byte]asm.Size{'s': asm.Half, 'l': asm.Word}[name[len(name)-1]]
	if strings.HasSuffix(name, "ll") {
		size = asm.DWord
	}
	f.emit(asm.HostTo(asm.BE, r, size))
	return r
}

// subrDevPart compiles getmajor(), getminor().
func (f *fn) subrDevPart(c *syntax.CallExpr, name string) asm.Register {
	// Linux dev_t: major in the bits above 20, minor in the low 20.
	r := f.onlyArg(c)
	if name == "getmajor" {
		f.emit(asm.Mov.Reg32(r, r), asm.RSh.Imm(r, 20))
	} else {
		f.emit(asm.And.Imm(r, 0xfffff))
	}
	return r
}

// subrSymAddr compiles sym(), func(), mod(), usym(), ufunc(), umod(), uaddr().
func (f *fn) subrSymAddr(c *syntax.CallExpr, _ string) asm.Register {
	// The value is the address; the consumer symbolizes it.
	r := f.onlyArg(c)
	return r
}

// subrStrchr compiles strchr(), strrchr().
func (f *fn) subrStrchr(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 2, 2)
	a := f.evalArgs(c, 2)
	f.normalize(a[1], program.TypeUChar)
	return f.strchr(a[0], a[1], name == "strrchr")
}

// subrSubstr compiles substr().
func (f *fn) subrSubstr(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 2, 3)
	str := f.expr(c.Args[0])
	idx := f.expr(c.Args[1])
	f.convert(idx, f.typeOf(c.Args[1]), program.TypeLong)
	var n asm.Register
	if len(c.Args) == 3 {
		n = f.expr(c.Args[2])
		f.convert(n, f.typeOf(c.Args[2]), program.TypeLong)
	} else {
		n = f.alloc()
		f.movImm(n, int64(f.g.opts.StrSize))
	}
	return f.substr(str, idx, n)
}

// subrPathPart compiles basename(), dirname().
func (f *fn) subrPathPart(c *syntax.CallExpr, name string) asm.Register {
	return f.pathPart(f.onlyArg(c), name == "dirname")
}

// subrInetNtoa compiles inet_ntoa().
func (f *fn) subrInetNtoa(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 1)
	dst := f.tmp(f.g.strBuf())
	f.inetNtoa(f.expr(c.Args[0]), dst)
	return f.strResult(dst)
}

// subrInetNtoa6 compiles inet_ntoa6().
func (f *fn) subrInetNtoa6(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 1, 2)
	strict := false
	if len(c.Args) == 2 {
		v, ok := f.constant(c.Args[1])
		if !ok {
			f.fail(c.Args[1], "inet_ntoa6( ) argument #2 must be an integer constant")
		}
		strict = v != 0
	}
	dst := f.tmp(f.g.strBuf())
	f.inetNtoa6(f.expr(c.Args[0]), dst, strict)
	return f.strResult(dst)
}

// subrInetNtop compiles inet_ntop().
func (f *fn) subrInetNtop(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 2, 2)
	return f.inetNtop(c)
}

// subrLinkNtop compiles link_ntop().
func (f *fn) subrLinkNtop(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 2, 2)
	a := f.evalArgs(c, 2)
	dst := f.tmp(f.g.strBuf())
	f.linkNtop(a[0], a[1], dst)
	return f.strResult(dst)
}

// subrCleanpath compiles cleanpath().
func (f *fn) subrCleanpath(c *syntax.CallExpr, _ string) asm.Register {
	return f.cleanpath(f.onlyArg(c))
}

// subrSearch compiles index(), rindex(), strstr().
func (f *fn) subrSearch(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 2, 3)
	if name == "strstr" && len(c.Args) != 2 {
		f.fail(c, "strstr( ) takes two arguments")
	}
	hs := f.hold(f.expr(c.Args[0]), c.Args[1])
	var pos asm.Register
	var hsub held
	havePos := len(c.Args) == 3
	if havePos {
		hsub = f.hold(f.expr(c.Args[1]), c.Args[2])
		pos = f.expr(c.Args[2])
		f.convert(pos, f.typeOf(c.Args[2]), program.TypeLong)
	} else {
		hsub = held{reg: f.expr(c.Args[1]), slot: -1}
	}
	sub := f.release(hsub)
	return f.loopSearch(f.release(hs), sub, pos, havePos, name)
}

// copyStrMax implements copyinstr(addr, maxsize): at most maxsize bytes
// with the NUL from user address a, and as in DTrace no more than strsize
// with the NUL. Both registers are consumed; a bad address faults.
func (f *fn) copyStrMax(a, n asm.Register) asm.Register {
	size := int32(f.g.opts.StrSize)
	off := f.tmp(f.g.strBuf())
	f.emit(storeImm(regScratch, int16(off), 0, asm.Byte), asm.JSGE.Imm(n, 1, f.pendLabel("cimin")), asm.Mov.Imm(n, 1))
	f.markPending()
	f.emit(asm.JSLE.Imm(n, size, f.pendLabel("cimax")), asm.Mov.Imm(n, size))
	f.markPending()
	f.call(asm.FnProbeReadUserStr, scr(off), reg(n), keep(a))
	f.checkRead(a)
	f.free(a)
	return f.strResult(off)
}

// strResult returns a pointer to the string at scratch offset off.
func (f *fn) strResult(off uint32) asm.Register {
	r := f.alloc()
	f.scratchPtr(r, off)
	return r
}

// inetNtop implements inet_ntop(af, addr): AF_INET6 formats as strict
// inet_ntoa6(), AF_INET as inet_ntoa(), any other family faults with an
// illegal operation. A constant family generates only its own code.
func (f *fn) inetNtop(c *syntax.CallExpr) asm.Register {
	dst := f.tmp(f.g.strBuf())
	if af, ok := f.constant(c.Args[0]); ok {
		src := f.expr(c.Args[1])
		switch af {
		case afINET6:
			f.inetNtoa6(src, dst, true)
		case afINET:
			f.inetNtoa(src, dst)
		default:
			r := f.alloc()
			f.movImm(r, af)
			f.fault(abi.FltIllOp, r, true)
			f.free(r, src)
		}
		return f.strResult(dst)
	}
	a := f.evalArgs(c, 2)
	af, src := a[0], a[1]
	v6, v4, done := f.label("ntv6"), f.label("ntv4"), f.label("ntdone")
	f.emit(asm.JEq.Imm(af, afINET6, v6), asm.JEq.Imm(af, afINET, v4))
	f.fault(abi.FltIllOp, af, true)
	f.free(af)
	f.mark(v6)
	f.inetNtoa6(src, dst, true)
	f.emit(asm.Ja.Label(done))
	// src is live again on this path.
	f.used[src] = true
	f.mark(v4)
	f.inetNtoa(src, dst)
	f.mark(done)
	return f.strResult(dst)
}

// copyoutMax is the most bytes one copyout() writes: the bytes go
// through a scratch temporary of this size, since bpf_probe_write_user
// takes its source from memory the verifier can bound.
const copyoutMax = 1024

// subrCopyout compiles the destructive copyout(buf, uaddr, size) and
// copyoutstr(str, uaddr, size) with bpf_probe_write_user: copyout writes
// size bytes of kernel memory buf, copyoutstr the string str with its
// NUL, at most size bytes, into the firing process at uaddr. A size
// above copyoutMax (or strsize for a string) is an invalid size; a
// source or destination that cannot be accessed an invalid address.
func (f *fn) subrCopyout(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 3, 3)
	h0 := f.hold(f.expr(c.Args[0]), c.Args[1])
	h1 := f.hold(f.expr(c.Args[1]), c.Args[2])
	n := f.expr(c.Args[2])
	f.convert(n, f.typeOf(c.Args[2]), program.TypeLong)
	dst := f.release(h1)
	src := f.release(h0)
	str := name == "copyoutstr"
	max := int32(copyoutMax)
	if str {
		max = int32(f.g.opts.StrSize + 1)
	}
	done, ok := f.label("codone"), f.label("cosize")
	f.emit(asm.JEq.Imm(n, 0, done), asm.JLE.Imm(n, max, ok))
	f.fault(abi.FltBadSize, n, true)
	f.mark(ok)
	buf := f.tmp(uint32(max))
	if str {
		f.checkNotNull(src)
		f.call(asm.FnProbeReadKernelStr, scr(buf), keep(n), keep(src))
		f.checkRead(src)
		// The string's length with its NUL, which size bounds.
		f.emit(asm.Mov.Reg(n, asm.R0))
		f.exitIf(asm.JSLE.Imm(n, 0, done))
		f.emit(asm.JLE.Imm(n, max, f.pendLabel("cosmax")), asm.Mov.Imm(n, max))
		f.markPending()
	} else {
		f.call(asm.FnProbeReadKernel, scr(buf), keep(n), keep(src))
		f.checkRead(src)
	}
	f.free(src)
	f.call(asm.FnProbeWriteUser, keep(dst), scr(buf), reg(n))
	f.checkRead(dst)
	f.free(dst)
	f.mark(done)
	return f.zero()
}

// subrGetf compiles getf(fd): the current task's open file fd, a struct
// file * (illumos's file_t *), read through current->files->fdt as the
// kernel's fd table holds it; NULL for a descriptor outside the table or
// not open. The offsets come from the kernel's BTF.
func (f *fn) subrGetf(c *syntax.CallExpr, name string) asm.Register {
	f.need(c, 1, 1)
	mo := f.g.opts.MemberOffset
	if mo == nil {
		f.fail(c, "getf( ) needs the kernel's type information")
	}
	var offs [4]uint32
	for i, m := range [4][2]string{{"task_struct", "files"}, {"files_struct", "fdt"}, {"fdtable", "max_fds"}, {"fdtable", "fd"}} {
		o, err := mo(m[0], m[1])
		if err != nil {
			f.fail(c, "getf( ) needs struct %s of the kernel: %v", m[0], err)
		}
		offs[i] = o
	}
	fd := f.expr(c.Args[0])
	f.convert(fd, f.typeOf(c.Args[0]), program.TypeInt)
	// The descriptor and the result live in scratch slots: the jumps to
	// null leave from points where registers differ.
	st := f.tmp(16)
	res := int16(st + 8)
	f.emit(asm.StoreMem(regScratch, int16(st), fd, asm.DWord), storeImm(regScratch, res, 0, asm.DWord))
	f.free(fd)
	f.call(asm.FnGetCurrentTask)
	p := f.result()
	null := f.label("getfnull")
	// p = task->files, then ->fdt; a NULL link is no file.
	for _, o := range offs[:2] {
		f.emit(asm.Add.Imm(p, int32(o)))
		p = f.loadScalar(p, program.TypeULong, false)
		f.emit(asm.JEq.Imm(p, 0, null))
	}
	t := f.alloc()
	f.emit(asm.Mov.Reg(t, p), asm.Add.Imm(t, int32(offs[2])))
	n := f.loadScalar(t, program.TypeUInt, false)
	i := f.alloc()
	f.emit(asm.LoadMem(i, regScratch, int16(st), asm.DWord), asm.JSLT.Imm(i, 0, null), asm.JGE.Reg(i, n, null))
	f.free(n)
	f.emit(asm.Add.Imm(p, int32(offs[3])))
	p = f.loadScalar(p, program.TypeULong, false)
	f.emit(asm.LSh.Imm(i, 3), asm.Add.Reg(p, i))
	f.free(i)
	p = f.loadScalar(p, program.TypeULong, false)
	f.emit(asm.StoreMem(regScratch, res, p, asm.DWord))
	f.free(p)
	f.mark(null)
	r := f.alloc()
	f.emit(asm.LoadMem(r, regScratch, res, asm.DWord))
	return r
}
