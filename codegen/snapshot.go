package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// actionSnapshot compiles snapshot([n]) (beyond DTrace): a u32 record
// item, nonzero when this firing takes a snapshot. With n, the call's
// count in dt_snapshot is added to atomically (the old value comes
// back), so that exactly n firings take one however many CPUs race.
func (f *fn) actionSnapshot(c *syntax.CallExpr, name string, act program.Action) {
	f.need(c, 0, 1)
	item := program.Record{Action: act, Size: 4, Kind: program.KindUnsigned, FormatID: -1, AggID: -1}
	item.Offset = f.recAlloc(4, 4)
	if len(c.Args) == 0 {
		f.emit(storeImm(regScratch, f.out(item.Offset), 1, asm.Word))
		f.recItem(item)
		return
	}
	no := f.label("snapno")
	f.emit(storeImm(regScratch, f.out(item.Offset), 0, asm.Word))
	f.free(f.takeCount(c, no))
	f.emit(storeImm(regScratch, f.out(item.Offset), 1, asm.Word))
	f.mark(no)
	f.recItem(item)
}

// takeCount compiles the limit of a counted call (snapshot(n),
// traceoff(n)): it adds 1 to the call's count in dt_snapshot with an
// atomic fetch-add and jumps to over when the old count has reached n
// (c's argument), so that exactly n firings get past it however many
// CPUs race. It returns the register holding the count's address.
func (f *fn) takeCount(c *syntax.CallExpr, over string) asm.Register {
	n := f.expr(c.Args[0])
	f.convert(n, f.typeOf(c.Args[0]), program.TypeInt)
	site := f.g.countSite(c)
	p, old := f.alloc(), f.alloc()
	f.emit(asm.LoadMapValue(p, 0, uint32(8*site)).WithReference(abi.MapSnapshot),
		asm.Mov.Imm(old, 1),
		atomicMem(asm.FetchAdd, p, old, asm.DWord, 0),
		asm.JSGE.Reg(old, n, over))
	f.free(old)
	f.free(n)
	return p
}

// countSite returns the index of a counted call's count in dt_snapshot
// (the ERROR clauses' copies share their original's).
func (g *gen) countSite(c *syntax.CallExpr) int {
	if i, ok := g.countSites[c]; ok {
		return i
	}
	if g.countSites == nil {
		g.countSites = map[*syntax.CallExpr]int{}
	}
	g.countSites[c] = len(g.countSites)
	return g.countSites[c]
}
