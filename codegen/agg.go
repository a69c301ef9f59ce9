package codegen

import (
	"fmt"
	"math/bits"

	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles aggregations: @a[keys] = func(args) looks up or
// inserts the key in the per-CPU hash dt_agg_N and updates the value in
// place with the slot layout of package aggregate (program.AggDesc.Update
// is the reference).

// aggOf returns the AggSpec of an aggregation reference, creating it.
func (g *gen) aggOf(f *fn, ag *syntax.AggExpr) *program.AggSpec {
	ai := g.info.AggOf(ag)
	if ai == nil {
		f.fail(ag, "unresolved aggregation @%s", ag.Name)
	}
	for len(g.spec.Aggs) <= ai.ID {
		g.spec.Aggs = append(g.spec.Aggs, nil)
	}
	if a := g.spec.Aggs[ai.ID]; a != nil {
		return a
	}
	fn := program.AggFuncNamed(ai.Func)
	if fn == 0 {
		f.fail(ag, "unknown aggregating function %q", ai.Func)
	}
	d := program.AggDesc{ID: ai.ID, Name: ai.Name, Func: fn}
	p := ai.Params
	switch fn {
	case program.AggLquantize:
		if len(p) < 3 || p[2] <= 0 {
			f.fail(ag, "lquantize( ) needs base, limit and step")
		}
		d.Base, d.Step, d.Levels = int32(p[0]), uint16(p[2]), uint16((p[1]-p[0])/p[2])
	case program.AggLlquantize:
		if len(p) < 4 {
			f.fail(ag, "llquantize( ) needs factor, low, high and steps")
		}
		d.Factor, d.Lmag, d.Hmag, d.Steps = uint16(p[0]), uint16(p[1]), uint16(p[2]), uint16(p[3])
	}
	a := &program.AggSpec{ID: ai.ID, Name: ai.Name, Map: abi.AggMap(ai.ID), Func: ai.Func,
		Params: ai.Params, Desc: d, ValueSize: uint32(8 * d.NSlots())}
	var off uint32
	kts := make([]*program.Type, len(ai.Keys))
	for i, kt := range ai.Keys {
		var ke syntax.Expr
		if i < len(ag.Keys) {
			ke = ag.Keys[i]
		}
		if st := stackKeyType(ke, kt); st != nil {
			kt = st
		} else if st := symKeyType(ke); st != nil {
			kt = st
		}
		kts[i] = g.narrowKey(ai.ID, i, kt)
	}
	for _, kt := range kts {
		size := g.keySize(kt)
		item := program.Record{Action: program.ActArg, Offset: off, Size: size, Kind: program.KindSigned, FormatID: -1, AggID: ai.ID}
		switch {
		case kt.Stack == 1:
			item.Kind = program.KindStack
		case kt.Stack == 2:
			item.Kind = program.KindUStack
		case kt.Sym != program.KindNone:
			item.Kind = kt.Sym
		case kt.IsString():
			item.Kind = program.KindString
		case byRef(kt):
			item.Kind = program.KindBytes
		case kt.Kind == program.TInt && !kt.Signed, kt.Kind == program.TPointer:
			item.Kind = program.KindUnsigned
		}
		a.Keys = append(a.Keys, item)
		g.aggKeyTypes[ai.ID] = append(g.aggKeyTypes[ai.ID], kt)
		off += size
	}
	a.KeySize = max(4, off)
	charged := uint32(0)
	for i, k := range a.Keys {
		if k.Kind == program.KindString && g.aggKeyTypes[ai.ID][i].KeyWidth != 0 {
			charged += g.strBuf()
		} else {
			charged += k.Size
		}
	}
	a.ChargedSize = max(4, charged) + a.ValueSize
	g.spec.Charged.Tuple = max(g.spec.Charged.Tuple, g.chargedTuple(kts))
	g.spec.Charged.AggData = max(g.spec.Charged.AggData, 8+a.ValueSize)
	bounded := g.opts.AggSize > 0 && g.opts.AggSize/int64(a.ChargedSize) < aggCacheMinEntries
	if g.aggIndirect {
		g.placeAgg(a)
	} else if a.KeySize <= aggCacheMaxKey && a.ValueSize <= aggCacheMaxValue && !bounded {
		a.Cache, a.CacheSlots = abi.AggCacheMap(ai.ID), aggCacheSlots
	}
	g.spec.Aggs[ai.ID] = a
	return a
}

// aggregate compiles @a[keys] = func(args).
func (f *fn) aggregate(as *syntax.AssignExpr, ag *syntax.AggExpr) {
	a := f.g.aggOf(f, ag)
	call, ok := as.Y.(*syntax.CallExpr)
	if !ok {
		f.fail(as.Y, "aggregating function call expected")
	}
	d := &a.Desc
	// The value and increment are computed before the key, as dtrace does.
	var v, incr asm.Register
	haveV := false
	nparams := map[program.AggFunc]int{program.AggLquantize: 3, program.AggLlquantize: 4}[d.Func]
	if d.Func != program.AggCount {
		if len(call.Args) < 1 {
			f.fail(call, "%s( ) needs a value", a.Func)
		}
		v = f.expr(call.Args[0])
		f.convert(v, f.typeOf(call.Args[0]), program.TypeLong)
		haveV = true
	}
	quant := d.Func == program.AggQuantize || nparams > 0
	if i := 1 + nparams; quant && len(call.Args) > i {
		incr = f.expr(call.Args[i])
		f.convert(incr, f.typeOf(call.Args[i]), program.TypeLong)
	} else if quant {
		incr = f.alloc()
		f.emit(asm.Mov.Imm(incr, 1))
	}
	key := f.tmp(a.KeySize)
	for i := uint32(0); i < a.KeySize; i += 8 {
		sz := asm.DWord
		if a.KeySize-i < 8 {
			sz = asm.Word
		}
		f.emit(storeImm(regScratch, int16(key+i), 0, sz))
	}
	f.tuple(ag.Keys, f.g.aggKeyTypes[a.ID], key)

	f.g.aggValueMax = max(f.g.aggValueMax, a.ValueSize)
	f.g.useMap(a.Map)
	done := f.label("aggdone")
	if a.Cache != "" {
		f.aggCached(a, key, v, incr, done)
	}
	m := mapOp(a.Map)
	if via, ok := f.g.aggVia[a.ID]; ok {
		idx := f.tmp(8)
		f.emit(storeImm(regScratch, int16(idx), int64(via.index), asm.Word))
		f.call(asm.FnMapLookupElem, mapOp(via.array), scr(idx))
		f.emit(asm.JEq.Imm(asm.R0, 0, done))
		m = keep(f.result())
	}
	p := f.lookupOrInsert(m, key, abi.CPUAggDrops)
	if m.kind == opKeep {
		f.free(m.reg)
	}
	f.emit(asm.JEq.Imm(p, 0, done))
	f.aggUpdate(d, p, v, incr)
	f.mark(done)
	f.free(p)
	if quant {
		f.free(incr)
	}
	if haveV {
		f.free(v)
	}
}

// lookupOrInsert finds key in map m (a map by name, or a register
// holding one), inserting a zero value if absent; it returns the value
// pointer, or 0 after counting a drop (in the dt_cpustate counter at
// drops) when the map is full.
func (f *fn) lookupOrInsert(m operand, key uint32, drops int16) asm.Register {
	found := f.label("found")
	f.call(asm.FnMapLookupElem, m, scr(key))
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.emit(storeImm(asm.R10, stackMisc, 0, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapZero), operand{kind: opStack, imm: stackMisc})
	f.emit(asm.JEq.Imm(asm.R0, 0, found))
	z := f.result()
	f.call(asm.FnMapUpdateElem, m, scr(key), reg(z), imm(1)) // BPF_NOEXIST
	f.call(asm.FnMapLookupElem, m, scr(key))
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.bumpCounter(drops)
	f.emit(asm.Mov.Imm(asm.R0, 0))
	f.mark(found)
	return f.result()
}

// aggUpdate applies one firing to the value at p.
func (f *fn) aggUpdate(d *program.AggDesc, p, v, incr asm.Register) {
	t := f.alloc()
	defer f.free(t)
	switch d.Func {
	case program.AggCount:
		f.emit(asm.LoadMem(t, p, 0, asm.DWord), asm.Add.Imm(t, 1), asm.StoreMem(p, 0, t, asm.DWord))
	case program.AggSum:
		f.emit(asm.LoadMem(t, p, 0, asm.DWord), asm.Add.Reg(t, v), asm.StoreMem(p, 0, t, asm.DWord))
	case program.AggMin, program.AggMax:
		set, skip := f.label("mmset"), f.label("mmskip")
		j := asm.JSLT
		if d.Func == program.AggMax {
			j = asm.JSGT
		}
		f.emit(asm.LoadMem(t, p, 8, asm.DWord), asm.JEq.Imm(t, 0, set),
			asm.LoadMem(t, p, 0, asm.DWord), j.Reg(v, t, set), asm.Ja.Label(skip))
		f.mark(set)
		f.emit(asm.StoreMem(p, 0, v, asm.DWord))
		f.mark(skip)
		f.emit(asm.LoadMem(t, p, 8, asm.DWord), asm.Add.Imm(t, 1), asm.StoreMem(p, 8, t, asm.DWord))
	case program.AggAvg:
		f.emit(asm.LoadMem(t, p, 0, asm.DWord), asm.Add.Imm(t, 1), asm.StoreMem(p, 0, t, asm.DWord),
			asm.LoadMem(t, p, 8, asm.DWord), asm.Add.Reg(t, v), asm.StoreMem(p, 8, t, asm.DWord))
	case program.AggStddev:
		f.emit(asm.LoadMem(t, p, 0, asm.DWord), asm.Add.Imm(t, 1), asm.StoreMem(p, 0, t, asm.DWord),
			asm.LoadMem(t, p, 8, asm.DWord), asm.Add.Reg(t, v), asm.StoreMem(p, 8, t, asm.DWord))
		f.square128(p, v)
	case program.AggQuantize:
		f.emit(asm.Mov.Reg(t, v))
		f.quantizeIndex(t)
		f.addSlot(p, t, incr, program.QuantizeBuckets-1)
	case program.AggLquantize:
		f.emit(asm.Mov.Reg(t, v))
		f.lquantizeIndex(t, d)
		f.addSlot(p, t, incr, int(d.Levels)+1)
	case program.AggLlquantize:
		f.emit(asm.Mov.Reg(t, v))
		f.llquantizeIndex(t, d)
		f.addSlot(p, t, incr, d.NSlots()-1)
	}
}

// addSlot adds incr to slot idx (consumed) of the value at p; idx is
// checked against last so the verifier can bound the access.
func (f *fn) addSlot(p, idx, incr asm.Register, last int) {
	skip := f.label("slotskip")
	f.emit(asm.JGT.Imm(idx, int32(last), skip))
	q := f.alloc()
	f.emit(asm.LSh.Imm(idx, 3), asm.Mov.Reg(q, p), asm.Add.Reg(q, idx),
		asm.LoadMem(idx, q, 0, asm.DWord), asm.Add.Reg(idx, incr), asm.StoreMem(q, 0, idx, asm.DWord))
	f.free(q)
	f.mark(skip)
}

// quantizeIndex turns the value in r into its quantize() bucket.
func (f *fn) quantizeIndex(r asm.Register) {
	done, pos, nonmin := f.label("qdone"), f.label("qpos"), f.label("qnonmin")
	neg := f.alloc()
	n := f.alloc()
	s := f.alloc()
	defer f.free(neg, n, s)
	f.emit(asm.JNE.Imm(r, 0, nonmin), asm.Mov.Imm(r, program.QuantizeZero), asm.Ja.Label(done))
	f.mark(nonmin)
	f.emit(asm.LoadImm(s, -1<<63, asm.DWord), asm.JNE.Reg(r, s, pos), asm.Mov.Imm(r, 0), asm.Ja.Label(done))
	f.mark(pos)
	f.emit(asm.Mov.Imm(neg, 0))
	abs := f.label("qabs")
	f.emit(asm.JSGE.Imm(r, 0, abs), asm.Mov.Imm(neg, 1), asm.Neg.Imm(r, 0))
	f.mark(abs)
	// n = number of significant bits of r (r >= 1).
	f.emit(asm.Mov.Imm(n, 1))
	for _, sh := range []int32{32, 16, 8, 4, 2, 1} {
		l := f.label("qb")
		f.emit(asm.Mov.Reg(s, r), asm.RSh.Imm(s, sh), asm.JEq.Imm(s, 0, l), asm.Mov.Reg(r, s), asm.Add.Imm(n, sh))
		f.mark(l)
	}
	neg2 := f.label("qneg")
	f.emit(asm.Mov.Imm(r, program.QuantizeZero), asm.JNE.Imm(neg, 0, neg2), asm.Add.Reg(r, n), asm.Ja.Label(done))
	f.mark(neg2)
	f.emit(asm.Sub.Reg(r, n))
	f.mark(done)
}

// lquantizeIndex turns the value in r into its lquantize() bucket.
func (f *fn) lquantizeIndex(r asm.Register, d *program.AggDesc) {
	done, above := f.label("lqdone"), f.label("lqabove")
	b := f.alloc()
	defer f.free(b)
	f.movImm(b, int64(d.Base))
	f.emit(asm.JSGE.Reg(r, b, above), asm.Mov.Imm(r, 0), asm.Ja.Label(done))
	f.mark(above)
	f.emit(asm.Sub.Reg(r, b), asm.Div.Imm(r, int32(d.Step)))
	capped := f.label("lqcap")
	f.emit(asm.JLE.Imm(r, int32(d.Levels), capped), asm.Mov.Imm(r, int32(d.Levels)))
	f.mark(capped)
	f.emit(asm.Add.Imm(r, 1))
	f.mark(done)
}

// llquantizeIndex turns the value in r into its llquantize() bucket,
// with the magnitude loop unrolled over the constant parameters.
func (f *fn) llquantizeIndex(r asm.Register, d *program.AggDesc) {
	factor, lmag, hmag, steps := uint64(d.Factor), uint64(d.Lmag), uint64(d.Hmag), uint64(d.Steps)
	under := int64(1 + (int(hmag)-int(lmag)+1)*int(steps-steps/factor))
	sf := steps / factor
	neg, c := f.alloc(), f.alloc()
	defer f.free(neg, c)
	abs, sign, done := f.label("llabs"), f.label("llsign"), f.label("lldone")
	f.emit(asm.Mov.Imm(neg, 0), asm.JSGE.Imm(r, 0, abs), asm.Mov.Imm(neg, 1), asm.Neg.Imm(r, 0))
	f.mark(abs)
	pow := func(e uint64) uint64 {
		v := uint64(1)
		for ; e > 0; e-- {
			hi, lo := bits.Mul64(v, factor)
			if hi != 0 {
				return ^uint64(0)
			}
			v = lo
		}
		return v
	}
	notUnder := f.label("llnu")
	f.movImm(c, int64(pow(lmag)))
	f.emit(asm.JGE.Reg(r, c, notUnder), asm.Mov.Imm(r, int32(under)), asm.Ja.Label(done))
	f.mark(notUnder)
	for mag := lmag; mag <= hmag; mag++ {
		m := pow(mag + 1)
		next := f.label("llmag")
		f.movImm(c, int64(m))
		f.emit(asm.JGE.Reg(r, c, next))
		if mag != 0 {
			f.movImm(c, int64(m/steps))
			f.emit(asm.Div.Reg(r, c))
		} else {
			f.emit(asm.Mul.Imm(r, int32(steps)))
			f.movImm(c, int64(m))
			f.emit(asm.Div.Reg(r, c))
		}
		f.emit(asm.Sub.Imm(r, int32(sf)), asm.Add.Imm(r, int32((mag-lmag)*(steps-sf)+1)), asm.Ja.Label(sign))
		f.mark(next)
	}
	f.emit(asm.Mov.Imm(r, int32((hmag+1-lmag)*(steps-sf)+1)))
	f.mark(sign)
	pos := f.label("llpos")
	f.emit(asm.JEq.Imm(neg, 0, pos), asm.Neg.Imm(r, 0))
	f.mark(pos)
	f.emit(asm.Add.Imm(r, int32(under)))
	f.mark(done)
}

// square128 adds v*v (as a 128-bit unsigned number) to slots 2 and 3.
func (f *fn) square128(p, v asm.Register) {
	a, lo, mid, hi := f.alloc(), f.alloc(), f.alloc(), f.alloc()
	defer f.free(a, lo, mid, hi)
	abs := f.label("sqabs")
	f.emit(asm.Mov.Reg(a, v), asm.JSGE.Imm(a, 0, abs), asm.Neg.Imm(a, 0))
	f.mark(abs)
	// a = ah*2^32 + al; a^2 = ah^2*2^64 + 2*ah*al*2^32 + al^2.
	f.emit(
		asm.Mov.Reg32(lo, a), asm.Mul.Reg(lo, lo), // lo = al*al
		asm.Mov.Reg(hi, a), asm.RSh.Imm(hi, 32), // hi = ah
		asm.Mov.Reg32(mid, a), asm.Mul.Reg(mid, hi), // mid = ah*al
		asm.Mul.Reg(hi, hi), // hi = ah*ah
		// 2*mid*2^32: high part mid>>31, low part mid<<33.
		asm.Mov.Reg(a, mid), asm.RSh.Imm(a, 31), asm.Add.Reg(hi, a),
		asm.LSh.Imm(mid, 33), asm.Add.Reg(lo, mid),
		asm.JGE.Reg(lo, mid, f.pendLabel("sqnc")),
		asm.Add.Imm(hi, 1),
	)
	f.markPending()
	// slots[2:4] += (lo, hi) with carry.
	f.emit(asm.LoadMem(a, p, 16, asm.DWord), asm.Add.Reg(a, lo), asm.StoreMem(p, 16, a, asm.DWord),
		asm.JGE.Reg(a, lo, f.pendLabel("sqnc2")), asm.Add.Imm(hi, 1))
	f.markPending()
	f.emit(asm.LoadMem(a, p, 24, asm.DWord), asm.Add.Reg(a, hi), asm.StoreMem(p, 24, a, asm.DWord))
}

// pendLabel makes a label to be placed by the next markPending.
func (f *fn) pendLabel(hint string) string {
	f.pendingMark = f.label(hint)
	return f.pendingMark
}

func (f *fn) markPending() { f.mark(f.pendingMark) }

// Default depths of stack()/ustack() aggregation keys (stackframes,
// ustackframes).
const (
	stackKeyFrames  = 20
	ustackKeyFrames = 100
)

// stackKeyType returns the key type of a stack()/ustack() aggregation
// key (e, when known, is the key expression; kt its checked type), or
// nil for other keys.
func stackKeyType(e syntax.Expr, kt *program.Type) *program.Type {
	e = syntax.Unparen(e)
	kind, depth := 0, uint32(0)
	if c, ok := e.(*syntax.CallExpr); ok {
		if g, _ := callGen(c); g != nil {
			switch g.act {
			case program.ActStack:
				kind, depth = 1, stackKeyFrames
			case program.ActUStack:
				kind, depth = 2, ustackKeyFrames
			}
			if kind != 0 && len(c.Args) > 0 {
				if l, ok := c.Args[0].(*syntax.IntLit); ok && l.Value > 0 && l.Value <= 1024 {
					depth = uint32(l.Value)
				}
			}
		}
	}
	if kind == 0 && e == nil && kt != nil && kt.Name == "stack" {
		kind, depth = 1, stackKeyFrames
	}
	if kind == 0 {
		return nil
	}
	size := 8 * depth
	if kind == 2 {
		size += 8
	}
	return &program.Type{Kind: program.TArray, Size: size, Len: depth, Elem: program.TypeULong, Name: "stack", Stack: kind}
}

// symKeyType returns the key type of an aggregation key that is a symbol
// subroutine call (sym(), usym(), ...): the address, after the tgid of
// the process for the user kinds (the tuple is then 16 bytes). It
// returns nil for other keys.
func symKeyType(e syntax.Expr) *program.Type {
	kind := symKind(e)
	switch {
	case kind == program.KindNone:
		return nil
	case kind >= program.KindUSym:
		return &program.Type{Kind: program.TArray, Size: 16, Len: 2, Elem: program.TypeULong, Name: "_usymaddr", Sym: kind}
	}
	return &program.Type{Kind: program.TInt, Size: 8, Name: "_symaddr", Sym: kind}
}

// stackInto writes a stack key of type kt at scratch offset off (already
// zeroed): ustack's tgid, then the PCs bpf_get_stack finds. BEGIN and
// END have no kernel stack.
func (f *fn) stackInto(off uint32, kt *program.Type) {
	flags := int64(0)
	pcs := off
	if kt.Stack == 2 {
		flags = 1 << 8 // BPF_F_USER_STACK
		f.call(asm.FnGetCurrentPidTgid)
		f.emit(asm.RSh.Imm(asm.R0, 32), asm.StoreMem(regScratch, int16(off), asm.R0, asm.DWord))
		pcs += 8
	}
	skip := f.label("nostk")
	if kt.Stack == 1 {
		p := f.alloc()
		f.emit(asm.LoadMem(p, regScratch, int16(f.g.layout.MState)+abi.MStatePrid, asm.Word), asm.JLE.Imm(p, abi.ProbeEnd, skip))
		f.free(p)
	}
	if kt.Stack == 2 {
		f.free(f.ustackPCs(pcs, int64(8*kt.Len)))
	} else {
		f.call(asm.FnGetStack, ctxOp(), scr(pcs), imm(int64(8*kt.Len)), imm(flags))
	}
	f.mark(skip)
}

// aggsDirect is the most aggregations a program has with a hash (and a
// front cache) each named by its code: the kernel lets a program name
// at most 64 maps, and a probe program names a dozen others.
const aggsDirect = 20

// aggSlot is where an aggregation's hash lies when aggregations are
// reached through arrays of maps: the array's name and the index.
type aggSlot struct {
	array string
	index int
}

// aggArray is an array of the aggregation hashes of one key and value
// size.
type aggArray struct {
	name               string
	keySize, valueSize uint32
	inner              []string
}

// placeAgg puts aggregation a's hash in the array of its shape.
func (g *gen) placeAgg(a *program.AggSpec) {
	if _, ok := g.aggVia[a.ID]; ok {
		return
	}
	name := fmt.Sprintf("%s%d_%d", abi.MapAggMapsPrefix, a.KeySize, a.ValueSize)
	var aa *aggArray
	for _, x := range g.aggArrays {
		if x.name == name {
			aa = x
		}
	}
	if aa == nil {
		aa = &aggArray{name: name, keySize: a.KeySize, valueSize: a.ValueSize}
		g.aggArrays = append(g.aggArrays, aa)
	}
	if g.aggVia == nil {
		g.aggVia = map[int]aggSlot{}
	}
	g.aggVia[a.ID] = aggSlot{array: name, index: len(aa.inner)}
	aa.inner = append(aa.inner, a.Map)
}

// countAggs counts the aggregations the clauses name.
func countAggs(clauses []Clause) int {
	names := map[string]bool{}
	for _, c := range clauses {
		syntax.InspectCode(c.Decl, func(n syntax.Node) bool {
			if ag, ok := n.(*syntax.AggExpr); ok {
				names[ag.Name] = true
			}
			return true
		})
	}
	return len(names)
}
