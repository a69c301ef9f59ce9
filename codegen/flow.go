package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file compiles flow variables (beyond DTrace; docs/FLOW.md): the
// flow-> variables of a thread live together in one dt_flow value keyed
// by its tid (abi.Flow* layout), so that the transports copy a flow whole
// as work moves: to a child at fork (__flow_fork), into dt_flowdata with
// the bytes of a write (__flow_send) and back out to the thread that reads
// them (__flow_recv). The maps are declared only when a clause names them:
// a program without flow-> has none of this.

// flowSize is the size of a dt_flow value.
func (g *gen) flowSize() uint32 { return abi.FlowVars + g.fvarEnd }

// threadKey stores the current thread's dt_flow key (its u64 tid) in
// scratch.
func (f *fn) threadKey() uint32 {
	key := f.tmp(8)
	f.call(asm.FnGetCurrentPidTgid)
	f.emit(asm.Mov.Reg32(asm.R0, asm.R0), asm.StoreMem(regScratch, int16(key), asm.R0, asm.DWord))
	return key
}

// flowKey stores the key of the firing's flow in scratch and returns its
// offset with a register holding a pointer to the map it is in: dt_flow
// under the thread's tid, or, where a block I/O transport named the
// firing's flow (mstate's MStateFlowKey: io:::start and io:::done),
// dt_flowbio under the request's bio (flowio.go).
func (f *fn) flowKey() (uint32, asm.Register) {
	key := f.threadKey()
	m, own := f.alloc(), f.label("fkown")
	f.emit(asm.LoadMapPtr(m, 0).WithReference(abi.MapFlow),
		asm.LoadMem(asm.R0, regScratch, int16(f.g.layout.MState)+abi.MStateFlowKey, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, own),
		asm.StoreMem(regScratch, int16(key), asm.R0, asm.DWord),
		asm.LoadMapPtr(m, 0).WithReference(abi.MapFlowBio))
	f.mark(own)
	f.g.useMap(abi.MapFlow)
	f.g.useMap(abi.MapFlowBio)
	return key, m
}

// zeroValue returns in R0 a pointer to dt_zero's all-zero value, which is
// at least size bytes; a failed lookup (never, for an array of one) ends
// the clause.
func (f *fn) zeroValue(size uint32) {
	f.g.zeroSize = max(f.g.zeroSize, size)
	f.emit(storeImm(asm.R10, stackMisc, 0, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapZero), operand{kind: opStack, imm: stackMisc})
	f.emit(asm.JEq.Imm(asm.R0, 0, f.ret))
}

// flowRead returns a pointer to the current thread's flow value, or to
// zeros when the thread has none: reading an unset flow variable gives 0.
func (f *fn) flowRead() asm.Register {
	key, m := f.flowKey()
	found := f.label("flow")
	f.call(asm.FnMapLookupElem, reg(m), scr(key))
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.zeroValue(f.g.flowSize())
	f.mark(found)
	return f.result()
}

// flowWrite returns a pointer to the firing's flow value, creating it
// with a new flow id on the thread's first store. A failed update counts
// a flow drop and ends the clause.
func (f *fn) flowWrite() asm.Register {
	key, m := f.flowKey()
	found, made := f.label("flow"), f.label("flownew")
	f.call(asm.FnMapLookupElem, keep(m), scr(key))
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.zeroValue(f.g.flowSize())
	z := f.result()
	f.flowCreate(keep(m), key, z)
	f.call(asm.FnMapLookupElem, keep(m), scr(key))
	f.emit(asm.JNE.Imm(asm.R0, 0, made))
	f.bumpCounter(abi.CPUFlowDrops)
	f.emit(asm.Ja.Label(f.ret))
	f.mark(made)
	// A new flow: its id comes from the program-wide counter in
	// dt_gvars, taken atomically so that CPUs never share one.
	p, id := f.result(), f.alloc()
	f.emit(asm.LoadMapValue(id, 0, f.g.flowIDOff).WithReference(abi.MapGVars))
	n := f.alloc()
	f.emit(asm.Mov.Imm(n, 1),
		atomicMem(asm.FetchAdd, id, n, asm.DWord, 0),
		asm.Add.Imm(n, 1),
		asm.StoreMem(p, abi.FlowID, n, asm.DWord),
		asm.Mov.Reg(asm.R0, p))
	f.free(p, id, n)
	f.mark(found)
	f.free(m)
	return f.result()
}

// loadFlowVar loads flow->x.
func (f *fn) loadFlowVar(v *Var, t *program.Type) asm.Register {
	p := f.flowRead()
	return f.loadAt(p, abi.FlowVars+f.g.fvars[v.ID], t)
}

// storeFlowVar stores r (consumed) into flow->x. Storing 0 clears the
// variable; the flow and its id stay, as the work goes on.
func (f *fn) storeFlowVar(v *Var, r asm.Register, t *program.Type) {
	// r stays live across flowWrite's helper calls (call saves it).
	p := f.flowWrite()
	f.storeAt(p, abi.FlowVars+f.g.fvars[v.ID], r, t)
}

// varFlowid compiles flowid: the current flow's id, 0 without one.
func (f *fn) varFlowid(e syntax.Expr, _ string) asm.Register {
	p := f.flowRead()
	r := f.alloc()
	f.emit(asm.LoadMem(r, p, abi.FlowID, asm.DWord))
	f.free(p)
	return r
}

// subrFlowFork compiles __flow_fork(tid): the new thread tid starts with
// a copy of the current thread's flow (task:task_newtask runs in the
// parent, before the child can run).
func (f *fn) subrFlowFork(c *syntax.CallExpr, _ string) asm.Register {
	return f.flowFileUnder(c, abi.MapFlow)
}

// flowFileUnder files the current thread's flow, if it has one, in map m
// under the key that is the call's one argument.
func (f *fn) flowFileUnder(c *syntax.CallExpr, m string) asm.Register {
	f.need(c, 1, 1)
	dst := f.flowArg(c, 0)
	key := f.threadKey()
	done := f.label("ffdone")
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlow), scr(key))
	f.emit(asm.JEq.Imm(asm.R0, 0, done))
	f.flowPut(m, dst, f.result(), done)
	f.mark(done)
	return f.zero()
}

// subrFlowExit compiles __flow_exit(): an exiting thread's flow goes.
//
// newflow() (beyond DTrace) is the same for the current thread: its flow
// ends, and its next flow-> store starts a new one with a new flowid (a
// new trace for -x otlp): a server marks each request's start with it.
func (f *fn) subrFlowExit(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 0, 0)
	f.flowDelete(abi.MapFlow, f.threadKey())
	return f.zero()
}

// subrFlowSend compiles __flow_send(stream, n): n bytes are being
// written to the pipe or socket at address stream (0: not one). The
// writer's flow, as it is now, is filed in dt_flowdata under the stream
// offset of the first byte, with the offset past the last in FlowAux; a
// writer without a flow files zeros there once the stream carries flows,
// so that the reader of those bytes loses the flow it had. The value is
// the offset plus 1, 0 when nothing was filed. Called at a write's entry
// with the count asked for, the entry is on file before a reader can see
// the bytes; __flow_sent corrects a write that wrote less.
func (f *fn) subrFlowSend(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 3, 3)
	res := f.zero()
	buf := f.flowArg(c, 2)
	dkey, n, done := f.flowStreamArgs(c)
	fl := f.flowRead()
	pos := f.flowPos(dkey, fl, done)
	start := f.alloc()
	f.emit(asm.Mov.Reg(start, n),
		atomicMem(asm.FetchAdd, pos, start, asm.DWord, abi.FlowPosWrite),
		asm.StoreMem(regScratch, int16(dkey+8), start, asm.DWord))
	f.pruneFlowData(pos, dkey)
	f.flowPut(abi.MapFlowData, dkey, fl, done)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, done),
		asm.Mov.Reg(res, start), asm.Add.Imm(res, 1),
		asm.Add.Reg(start, n),
		asm.StoreMem(asm.R0, abi.FlowAux, start, asm.DWord))
	f.free(start)
	// A write of 16 bytes or more is also found by its tag.
	tag := f.flowTag(buf, n, dkey, done)
	f.free(n)
	f.flowPutScratch(abi.MapFlowTag, tag, dkey+8, done)
	f.mark(done)
	return res
}

// flowPruneSlack is how far behind the stream's read count a write must
// end before it is pruned: a racing reader may still look it up by tag.
const flowPruneSlack = 4096

// pruneFlowData deletes up to 4 of the oldest writes on file of the
// stream whose dt_flowpos value pos (consumed) points to, those read
// flowPruneSlack bytes ago or more, following FlowPosOld from each write
// to the next: every write filed prunes more than it adds, so readers
// that take many writes at once leave nothing behind.
func (f *fn) pruneFlowData(pos asm.Register, dkey uint32) {
	pkey, stop := f.tmp(abi.FlowDataKeySize), f.label("fprune")
	old := f.alloc()
	f.emit(asm.LoadMem(old, regScratch, int16(dkey), asm.DWord),
		asm.StoreMem(regScratch, int16(pkey), old, asm.DWord))
	for range 4 {
		rd := f.alloc()
		f.emit(asm.LoadMem(old, pos, abi.FlowPosOld, asm.DWord),
			asm.StoreMem(regScratch, int16(pkey+8), old, asm.DWord),
			asm.Add.Imm(old, flowPruneSlack),
			asm.LoadMem(rd, pos, abi.FlowPosRead, asm.DWord),
			asm.JGT.Reg(old, rd, stop))
		f.free(rd)
		f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(pkey))
		f.emit(asm.JEq.Imm(asm.R0, 0, stop),
			asm.LoadMem(old, asm.R0, abi.FlowAux, asm.DWord),
			asm.StoreMem(pos, abi.FlowPosOld, old, asm.DWord))
		f.flowDelete(abi.MapFlowData, pkey)
	}
	f.mark(stop)
	f.free(old, pos)
}

// flowArg stores argument i of a transport (the address of the bytes
// written or read, 0: not known; a bio) in scratch and returns the
// offset.
func (f *fn) flowArg(c *syntax.CallExpr, i int) uint32 {
	slot := f.tmp(8)
	r := f.expr(c.Args[i])
	f.emit(asm.StoreMem(regScratch, int16(slot), r, asm.DWord))
	f.free(r)
	return slot
}

// flowTag computes the dt_flowtag key of the bytes at the user address in
// scratch at buf, n of them, in the stream of the dt_flowdata
// key at dkey: a hash of the first 16 bytes and the stream. With fewer
// than 16 bytes, no address, or bytes that cannot be read, the code goes
// to none. It returns the key's scratch offset.
func (f *fn) flowTag(buf uint32, n asm.Register, dkey uint32, none string) uint32 {
	tb, key := f.tmp(16), f.tmp(8)
	b := f.alloc()
	f.emit(asm.JLT.Imm(n, 16, none), asm.LoadMem(b, regScratch, int16(buf), asm.DWord), asm.JEq.Imm(b, 0, none))
	f.call(asm.FnProbeReadUser, scr(tb), imm(16), reg(b))
	f.emit(asm.JNE.Imm(asm.R0, 0, none))
	w, x, k := f.alloc(), f.alloc(), f.alloc()
	f.emit(asm.LoadMem(w, regScratch, int16(tb), asm.DWord),
		asm.LoadImm(k, -0x61c8864680b583eb, asm.DWord), // 0x9e3779b97f4a7c15
		asm.Mul.Reg(w, k),
		asm.LoadMem(x, regScratch, int16(tb+8), asm.DWord),
		asm.LoadImm(k, -0x3d4d51c2d82b14b1, asm.DWord), // 0xc2b2ae3d27d4eb4f
		asm.Mul.Reg(x, k),
		asm.Xor.Reg(w, x),
		asm.LoadMem(x, regScratch, int16(dkey), asm.DWord),
		asm.Xor.Reg(w, x),
		asm.StoreMem(regScratch, int16(key), w, asm.DWord))
	f.free(w, x, k)
	return key
}

// subrFlowSent compiles __flow_sent(stream, at, asked, n): the write that
// __flow_send filed at offset at (its value minus 1) for asked bytes wrote
// n (< 0: none). A short write gives back the offsets it did not use when
// no write was filed after it (a write that wrote nothing leaves an empty
// entry, which the next write's replaces); otherwise the stream's offsets
// are off by the difference from then on, which counts a flow drop.
func (f *fn) subrFlowSent(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 4, 4)
	// The arguments wait in scratch: stream, at, asked, n.
	args := f.tmp(4 * 8)
	for i, a := range c.Args {
		r := f.expr(a)
		f.emit(asm.StoreMem(regScratch, int16(args+uint32(8*i)), r, asm.DWord))
		f.free(r)
	}
	dkey := f.tmp(abi.FlowDataKeySize)
	done := f.label("fsdone")
	at, want, n := f.alloc(), f.alloc(), f.alloc()
	f.emit(asm.LoadMem(want, regScratch, int16(args+16), asm.DWord),
		asm.LoadMem(n, regScratch, int16(args+24), asm.DWord),
		asm.JEq.Reg(n, want, done),
		asm.LoadMem(at, regScratch, int16(args+8), asm.DWord),
		asm.LoadMem(asm.R0, regScratch, int16(args), asm.DWord),
		asm.StoreMem(regScratch, int16(dkey), asm.R0, asm.DWord),
		asm.StoreMem(regScratch, int16(dkey+8), at, asm.DWord))
	pos := f.label("fsneg")
	f.emit(asm.JSGE.Imm(n, 0, pos), asm.Mov.Imm(n, 0))
	f.mark(pos)
	// want and n become the end offsets asked for and written.
	f.emit(asm.Add.Reg(want, at), asm.Add.Reg(n, at))
	f.free(at)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowPos), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, done))
	p := f.result()
	ok := f.label("fsok")
	f.emit(asm.Mov.Reg(asm.R0, want),
		atomicMem(asm.CmpXchg, p, n, asm.DWord, abi.FlowPosWrite),
		asm.JEq.Reg(asm.R0, want, ok))
	f.free(p, want)
	// The entry keeps the offsets it asked for, so that the writes on
	// file still follow each other (pruneFlowData).
	f.bumpCounter(abi.CPUFlowDrops)
	f.emit(asm.Ja.Label(done))
	f.mark(ok)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, done),
		asm.StoreMem(asm.R0, abi.FlowAux, n, asm.DWord))
	f.free(n)
	f.mark(done)
	return f.zero()
}

// subrFlowRecv compiles __flow_recv(stream, n, kind): n bytes were read
// from the pipe or socket at address stream (kind 0), one datagram (kind
// 1), or an eventfd's count (kind 2: what every write since the last read
// added). The reader takes the flow of the
// write its first byte belongs to, in place of its own: the write that
// starts at that byte, or the one it is in the middle of (FlowPosCur).
func (f *fn) subrFlowRecv(c *syntax.CallExpr, _ string) asm.Register {
	f.need(c, 4, 4)
	buf := f.flowArg(c, 3)
	dkey, n, done := f.flowStreamArgs(c)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowPos), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, done))
	pos := f.result()
	// A datagram read takes the whole write at the read position,
	// however much of it fits the reader's buffer.
	dg, stream, counter := f.expr(c.Args[2]), f.label("frstream"), f.label("frcounter")
	f.emit(asm.JEq.Imm(dg, 0, stream), asm.JNE.Imm(dg, 1, counter),
		asm.LoadMem(dg, pos, abi.FlowPosRead, asm.DWord),
		asm.StoreMem(regScratch, int16(dkey+8), dg, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, done),
		asm.LoadMem(n, asm.R0, abi.FlowAux, asm.DWord),
		asm.Sub.Reg(n, dg),
		asm.Ja.Label(stream))
	// A counter (eventfd) read takes every write since the last read.
	f.mark(counter)
	f.emit(asm.LoadMem(n, pos, abi.FlowPosWrite, asm.DWord),
		asm.LoadMem(dg, pos, abi.FlowPosRead, asm.DWord),
		asm.Sub.Reg(n, dg),
		asm.JSLE.Imm(n, 0, done))
	f.mark(stream)
	f.free(dg)
	start, e := f.alloc(), f.alloc()
	f.emit(asm.Mov.Imm(e, 0), asm.Mov.Reg(start, n),
		atomicMem(asm.FetchAdd, pos, start, asm.DWord, abi.FlowPosRead),
		asm.StoreMem(regScratch, int16(dkey+8), start, asm.DWord))
	inside, give, byPos := f.label("frin"), f.label("frgive"), f.label("frpos")
	// Readers of one stream take their offsets as their reads return,
	// which may be in another order than they took the bytes: a read of
	// 16 bytes or more first looks its write up by the bytes' tag.
	tag := f.flowTag(buf, n, dkey, byPos)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowTag), scr(tag))
	f.emit(asm.JEq.Imm(asm.R0, 0, byPos))
	at, tagged := f.alloc(), f.label("frtagged")
	f.emit(asm.LoadMem(at, asm.R0, 0, asm.DWord))
	f.flowDelete(abi.MapFlowTag, tag)
	f.emit(asm.StoreMem(regScratch, int16(dkey+8), at, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	f.emit(asm.JNE.Imm(asm.R0, 0, tagged),
		asm.StoreMem(regScratch, int16(dkey+8), start, asm.DWord),
		asm.Ja.Label(byPos))
	f.mark(tagged)
	f.emit(asm.Mov.Reg(e, asm.R0), asm.Ja.Label(give))
	f.free(at, n)
	f.mark(byPos)
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	f.emit(asm.JEq.Imm(asm.R0, 0, inside), asm.Mov.Reg(e, asm.R0))
	// A write starts at this byte: it is the one being read now.
	cur := f.alloc()
	f.emit(asm.StoreMem(pos, abi.FlowPosCur, start, asm.DWord), asm.Ja.Label(give))
	f.mark(inside)
	f.emit(asm.LoadMem(cur, pos, abi.FlowPosCur, asm.DWord),
		asm.StoreMem(regScratch, int16(dkey+8), cur, asm.DWord))
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowData), scr(dkey))
	// Bytes past the write being read belong to a write not on file
	// (its entry refused or gone): the reader keeps its own flow.
	f.emit(asm.JEq.Imm(asm.R0, 0, done), asm.Mov.Reg(e, asm.R0),
		asm.LoadMem(cur, e, abi.FlowAux, asm.DWord),
		asm.JGE.Reg(start, cur, done))
	f.mark(give)
	f.free(cur, start, pos)
	key := f.threadKey()
	clear := f.label("frclear")
	id := f.alloc()
	f.emit(asm.LoadMem(id, e, abi.FlowID, asm.DWord), asm.JEq.Imm(id, 0, clear))
	f.free(id)
	f.flowPut(abi.MapFlow, key, e, done)
	f.emit(asm.Ja.Label(done))
	f.mark(clear)
	f.flowDelete(abi.MapFlow, key)
	f.mark(done)
	return f.zero()
}

// flowStreamArgs compiles the (stream, n) arguments of a transport: the
// stream's address goes into a new dt_flowdata key in scratch, n stays in
// a register; done is where the transport ends, to which a null stream or
// a count below 1 go at once.
func (f *fn) flowStreamArgs(c *syntax.CallExpr) (dkey uint32, n asm.Register, done string) {
	stream := f.expr(c.Args[0])
	h := f.hold(stream, c.Args[1])
	n = f.expr(c.Args[1])
	stream = f.release(h)
	dkey = f.tmp(abi.FlowDataKeySize)
	done = f.label("fdone")
	f.emit(asm.JEq.Imm(stream, 0, done), asm.JSLE.Imm(n, 0, done),
		asm.StoreMem(regScratch, int16(dkey), stream, asm.DWord))
	f.free(stream)
	return dkey, n, done
}

// flowPos returns a pointer to the dt_flowpos value of the stream whose
// address starts the key at dkey. A stream is tracked from the first
// write of a thread with a flow (fl's id nonzero); before that, and when
// dt_flowpos is full (a flow drop), the transport ends at done.
func (f *fn) flowPos(dkey uint32, fl asm.Register, done string) asm.Register {
	found := f.label("fpos")
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowPos), scr(dkey))
	f.emit(asm.JNE.Imm(asm.R0, 0, found),
		asm.LoadMem(asm.R0, fl, abi.FlowID, asm.DWord),
		asm.JEq.Imm(asm.R0, 0, done))
	f.zeroValue(abi.FlowPosSize)
	f.flowCreate(mapOp(abi.MapFlowPos), dkey, f.result())
	f.call(asm.FnMapLookupElem, mapOp(abi.MapFlowPos), scr(dkey))
	f.emit(asm.JNE.Imm(asm.R0, 0, found))
	f.bumpCounter(abi.CPUFlowDrops)
	f.emit(asm.Ja.Label(done))
	f.mark(found)
	return f.result()
}

// The flow tables are LRU hashes: when one is full, an update evicts its
// least recently used entry without a word. So the programs count every
// entry they create (CPUFlowMade) and every one they delete
// (CPUFlowGone), and at the end the consumer reports made - gone - the
// entries still there as flow drops: the evicted ones, exactly.

// flowCreate creates the entry key (a scratch offset) of map m with the
// value z points to (consumed), counting it when it is new: an update
// that must not replace (BPF_NOEXIST). The caller looks the entry up
// afterwards.
func (f *fn) flowCreate(m operand, key uint32, z asm.Register) {
	f.call(asm.FnMapUpdateElem, m, scr(key), reg(z), imm(1)) // BPF_NOEXIST
	f.countIf(abi.CPUFlowMade, asm.JNE.Imm(asm.R0, 0, ""))
}

// flowPut stores the flow value v points to (consumed) under key (a
// scratch offset) in map m, counting the entry when it is new; a failed
// update counts a flow drop and goes to done.
func (f *fn) flowPut(m string, key uint32, v asm.Register, done string) {
	f.flowPutOp(m, key, reg(v), done)
}

// flowPutScratch is flowPut of the value at scratch offset val.
func (f *fn) flowPutScratch(m string, key, val uint32, done string) {
	f.flowPutOp(m, key, scr(val), done)
}

func (f *fn) flowPutOp(m string, key uint32, v operand, done string) {
	// An entry that is there is replaced (BPF_ANY), one that is not
	// is created (BPF_NOEXIST): the update's result says whether it
	// was new.
	f.call(asm.FnMapLookupElem, mapOp(m), scr(key))
	isNew, ok := f.alloc(), f.label("fput")
	f.emit(asm.Mov.Imm(isNew, 1), asm.JEq.Imm(asm.R0, 0, ok), asm.Mov.Imm(isNew, 0))
	f.mark(ok)
	f.call(asm.FnMapUpdateElem, mapOp(m), scr(key), v, keep(isNew))
	failed := f.label("fputfail")
	f.emit(asm.JNE.Imm(asm.R0, 0, failed))
	f.countIf(abi.CPUFlowMade, asm.JEq.Imm(isNew, 0, ""))
	f.free(isNew)
	ok = f.label("fputok")
	f.emit(asm.Ja.Label(ok))
	f.mark(failed)
	f.bumpCounter(abi.CPUFlowDrops)
	f.emit(asm.Ja.Label(done))
	f.mark(ok)
}

// flowDelete deletes the entry key (a scratch offset) of map m, counting
// it when it was there.
func (f *fn) flowDelete(m string, key uint32) {
	f.call(asm.FnMapDeleteElem, mapOp(m), scr(key))
	f.countIf(abi.CPUFlowGone, asm.JNE.Imm(asm.R0, 0, ""))
}

// countIf bumps the dt_cpustate counter at off unless the jump skip
// (its label left empty) is taken.
func (f *fn) countIf(off int16, skip asm.Instruction) {
	l := f.label("fnocount")
	f.emit(skip.WithReference(l))
	f.bumpCounter(off)
	f.mark(l)
}
