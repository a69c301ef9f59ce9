package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles statements and assembles records.

func (f *fn) block(list []syntax.Stmt) {
	for _, s := range list {
		f.stmt(s)
	}
}

func (f *fn) stmt(s syntax.Stmt) {
	f.pos = s.Pos()
	// Temporaries live for one statement (if/else bodies nest inside it).
	base := f.temp
	defer func() { f.temp = max(base, f.tempBase) }()
	switch s := s.(type) {
	case *syntax.BlockStmt:
		f.block(s.List)
	case *syntax.EmptyStmt, *syntax.DeclStmt:
	case *syntax.ExprStmt:
		f.exprStmt(s.X)
	case *syntax.IfStmt:
		// A data action in a branch must not share a record with what
		// runs before or after it.
		f.flush()
		c := f.cond(s.Cond)
		els, end := f.label("else"), f.label("endif")
		f.emit(asm.JEq.Imm(c, 0, els))
		f.free(c)
		f.stmt(s.Then)
		f.flush()
		if s.Else != nil {
			f.emit(asm.Ja.Label(end))
			f.mark(els)
			f.stmt(s.Else)
			f.flush()
			f.mark(end)
		} else {
			f.mark(els)
		}
	default:
		f.fail(s, "unsupported statement %T", s)
	}
}

func (f *fn) exprStmt(e syntax.Expr) {
	e = syntax.Unparen(e)
	if a, ok := e.(*syntax.AssignExpr); ok {
		if agg, ok := a.X.(*syntax.AggExpr); ok {
			f.aggregate(a, agg)
			return
		}
	}
	if c, ok := e.(*syntax.CallExpr); ok {
		if f.action(c) {
			return
		}
	}
	r := f.expr(e)
	f.free(r)
}

// defaultAction is what a clause without braces does: trace nothing,
// but still emit a record so the consumer prints the probe line.
func (f *fn) defaultAction() {
	f.recOpen()
}

// recOpen starts a new record if none is open.
func (f *fn) recOpen() *program.RecordSpec {
	if f.rec != nil {
		return f.rec
	}
	e := &program.RecordSpec{Index: uint32(len(f.segs)), Size: abi.HdrSize, First: len(f.segs) == 0}
	f.segs = append(f.segs, e)
	f.rec = e
	return e
}

// recAlloc reserves size bytes aligned to align in the open record and
// returns the offset.
func (f *fn) recAlloc(size, align uint32) uint32 {
	e := f.recOpen()
	if align == 0 {
		align = 1
	}
	off := (e.Size + align - 1) &^ (align - 1)
	e.Size = off + size
	if e.Size > f.g.recMax {
		f.g.recMax = e.Size
	}
	return off
}

// recItem appends a record item description.
func (f *fn) recItem(r program.Record) {
	e := f.recOpen()
	if r.FormatID == 0 && r.Action != program.ActPrintf && r.Action != program.ActPrinta && r.Action != program.ActSetopt && r.Action != program.ActSystem && r.Action != program.ActFreopen {
		r.FormatID = -1
	}
	e.Records = append(e.Records, r)
}

// out is the scratch offset of record offset off.
func (f *fn) out(off uint32) int16 { return int16(f.g.layout.Output + off) }

// flush emits the open record: header, then bpf_perf_event_output.
func (f *fn) flush() {
	e := f.rec
	if e == nil {
		return
	}
	f.rec = nil
	e.Size = align8(e.Size)
	if e.Size > f.g.recMax {
		f.g.recMax = e.Size
	}
	f.checkSpecSize(e)
	ms := int16(f.g.layout.MState)
	r := f.alloc()
	f.emit(
		asm.LoadMem(r, regScratch, ms+abi.MStateEPID, asm.Word),
		asm.StoreMem(regScratch, f.out(abi.HdrEPID), r, asm.Word))
	if f.g.speculates {
		f.emit(asm.LoadMem(r, regScratch, ms+abi.MStateSpecID, asm.Word),
			asm.StoreMem(regScratch, f.out(abi.HdrSpecID), r, asm.Word))
	} else {
		f.emit(storeImm(regScratch, f.out(abi.HdrSpecID), 0, asm.Word))
	}
	f.emit(storeImm(regScratch, f.out(abi.HdrSegment), int64(e.Index), asm.Word))
	f.free(r)
	if f.g.opts.RecordFlow {
		p := f.flowRead()
		id := f.alloc()
		f.emit(asm.LoadMem(id, p, abi.FlowID, asm.DWord),
			asm.StoreMem(regScratch, f.out(abi.HdrReserved), id, asm.Word))
		f.free(p, id)
	} else {
		f.emit(storeImm(regScratch, f.out(abi.HdrReserved), 0, asm.Word))
	}
	skip := f.label("gated")
	f.gateSend(e, skip)
	f.call(asm.FnPerfEventOutput, ctxOp(), mapOp(abi.MapBuf), imm(0xffffffff), scr(f.g.layout.Output), imm(int64(e.Size)))
	f.mark(skip)
}

// storeValue stores the value of e (of type t) into the open record and
// returns the item describing it.
func (f *fn) storeValue(e syntax.Expr, action program.Action) program.Record {
	t := f.typeOf(e)
	r := f.expr(e)
	if t.Kind == program.TArray && t.Size == 0 && t.Elem != nil && t.Elem.Char {
		// A char array of unknown length (extern char linux_banner[])
		// is its address: record the string there, as trace() and
		// printf("%s") show a char array.
		t = &program.Type{Kind: program.TString, Size: f.g.opts.StrSize, Name: "string"}
	}
	return f.storeReg(r, t, action)
}

// storePrint records print(p): the u64 address p, then the bytes of the
// object p points to, read (faulting on a bad address) as dtrace does,
// and the object's type for the consumer. A pointer to an object of no
// known size (the checker lets opaque ones through) records p alone.
func (f *fn) storePrint(e syntax.Expr) program.Record {
	t := f.typeOf(e)
	voidPtr := t != nil && t.Kind == program.TPointer && t.Elem != nil && t.Elem.Kind == program.TVoid
	if t == nil || t.Kind == program.TPointer && (t.Elem == nil || t.Elem.Size == 0) && !voidPtr {
		return f.storeValue(e, program.ActPrint)
	}
	if t.Kind != program.TPointer || voidPtr {
		// A value, printed with its type as illumos does; a void
		// pointer too, as illumos prints every pointer.
		it := f.storeValue(e, program.ActPrint)
		if it.Kind == program.KindString {
			t = &program.Type{Kind: program.TString, Size: it.Size, Name: "string"}
		}
		it.Type, it.ByValue = t, true
		return it
	}
	n := t.Elem.Size
	r := f.expr(e)
	off := f.recAlloc(8+n, 8)
	f.emit(asm.StoreMem(regScratch, f.out(off), r, asm.DWord))
	f.readInto(r, f.g.layout.Output+off+8, n, t.User)
	return program.Record{Action: program.ActPrint, FormatID: -1, AggID: -1, Offset: off, Size: 8 + n, Kind: program.KindBytes, Type: t.Elem}
}

func (f *fn) storeReg(r asm.Register, t *program.Type, action program.Action) program.Record {
	item := program.Record{Action: action, FormatID: -1, AggID: -1}
	switch {
	case t.Kind == program.TString:
		// As in DTrace, recording a NULL string faults (illval 0).
		nn := f.label("strnn")
		f.emit(asm.JNE.Imm(r, 0, nn))
		f.fault(abi.FltBadAddr, r, true)
		f.mark(nn)
		size := f.g.strBuf()
		off := f.recAlloc(size, 1)
		f.emit(storeImm(regScratch, f.out(off), 0, asm.Byte))
		p := f.alloc()
		f.scratchPtr(p, f.g.layout.Output+off)
		f.copyInto(p, r, t)
		item.Offset, item.Size, item.Kind = off, size, program.KindString
	case byRef(t):
		off := f.recAlloc(t.Size, 8)
		p := f.alloc()
		f.scratchPtr(p, f.g.layout.Output+off)
		f.copyInto(p, r, t)
		item.Offset, item.Size, item.Kind = off, t.Size, program.KindBytes
	default:
		size := t.Size
		if t.Kind != program.TInt || size == 0 {
			size = 8
		}
		off := f.recAlloc(size, size)
		f.emit(asm.StoreMem(regScratch, f.out(off), r, sizeOf(size)))
		f.free(r)
		item.Offset, item.Size, item.Kind = off, size, program.KindUnsigned
		if t.Kind == program.TInt && t.Signed {
			item.Kind = program.KindSigned
		}
	}
	return item
}

// format interns a format string.
func (g *gen) format(s string) int {
	for i, x := range g.spec.Formats {
		if x == s {
			return i
		}
	}
	g.spec.Formats = append(g.spec.Formats, s)
	return len(g.spec.Formats) - 1
}

// stringConst returns the value of a string literal argument.
func stringConst(e syntax.Expr) (string, bool) {
	e = syntax.Unparen(e)
	s, ok := e.(*syntax.StringLit)
	if !ok {
		return "", false
	}
	return s.Value, true
}
