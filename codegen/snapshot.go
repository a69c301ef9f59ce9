package codegen

import (
	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
)

// actionSnapshot compiles snapshot([n]) (beyond DTrace): a u32 record
// item, nonzero when this firing takes a snapshot. With n, the call's
// count in dt_snapshot is added to atomically (the old value comes
// back), so that exactly n firings take one however many CPUs race.
func (f *fn) actionSnapshot(c *syntax.CallExpr, name string, act Action) {
	f.need(c, 0, 1)
	item := Record{Action: act, Size: 4, Kind: KindUnsigned, FormatID: -1, AggID: -1}
	item.Offset = f.recAlloc(4, 4)
	if len(c.Args) == 0 {
		f.emit(storeImm(regScratch, f.out(item.Offset), 1, asm.Word))
		f.recItem(item)
		return
	}
	n := f.expr(c.Args[0])
	f.convert(n, f.typeOf(c.Args[0]), TypeInt)
	site := f.g.snapshotSite(c)
	p, old := f.alloc(), f.alloc()
	no := f.label("snapno")
	f.emit(asm.LoadMapValue(p, 0, uint32(8*site)).WithReference(abi.MapSnapshot),
		asm.Mov.Imm(old, 1),
		atomicMem(asm.FetchAdd, p, old, asm.DWord, 0),
		storeImm(regScratch, f.out(item.Offset), 0, asm.Word),
		asm.JSGE.Reg(old, n, no),
		storeImm(regScratch, f.out(item.Offset), 1, asm.Word))
	f.mark(no)
	f.free(old)
	f.free(p)
	f.free(n)
	f.recItem(item)
}

// snapshotSite returns the index of a snapshot(n) call's count (the
// ERROR clauses' copies share their original's).
func (g *gen) snapshotSite(c *syntax.CallExpr) int {
	if i, ok := g.snapSites[c]; ok {
		return i
	}
	if g.snapSites == nil {
		g.snapSites = map[*syntax.CallExpr]int{}
	}
	g.snapSites[c] = len(g.snapSites)
	return g.snapSites[c]
}
