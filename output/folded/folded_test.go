package folded

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
)

// syms knows main at 0x1000 and work at 0x2000 in /bin/a.out, a kernel
// function at 0xffff0000 and nothing else.
type syms struct{}

func (syms) KernelSym(addr uint64) (string, string, uint64, bool) {
	if addr >= 0xffff0000 {
		return "vmlinux", "do_sys;call", addr - 0xffff0000, true
	}
	return "", "", 0, false
}

func (syms) UserSym(pid int, addr uint64) (string, string, uint64, bool) {
	switch {
	case addr >= 0x2000 && addr < 0x3000:
		return "/bin/a.out", "work", addr - 0x2000, true
	case addr >= 0x1000 && addr < 0x2000:
		return "/bin/a.out", "main", addr - 0x1000, true
	case addr >= 0x9000:
		return "/lib/libc.so.6", "", 0, true
	}
	return "", "", 0, false
}

func TestFolded(t *testing.T) {
	var out bytes.Buffer
	r := New(text.New(text.Config{Out: &out, Sym: syms{}, Settings: output.Settings{Quiet: true}}), syms{}, aggregate.SortOptions{})
	stacks := aggregate.New(&aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount})
	u := func(pcs ...uint64) program.Stack { return program.Stack{PCs: pcs, User: true, PID: 7} }
	// Two call sites in work fold into one frame; the stacks differ in
	// their callers.
	stacks.Add([]program.Value{u(0x2004, 0x1010, 0x9abc, 0)}, []int64{60})
	stacks.Add([]program.Value{u(0x2008, 0x1020, 0x9abc)}, []int64{40})
	stacks.Add([]program.Value{u(0x2008, 0x500)}, []int64{3})
	keyed := aggregate.New(&aggregate.Desc{ID: 1, Name: "@k", Func: program.AggSum})
	keyed.Add([]program.Value{program.String("a;b"), program.Stack{PCs: []uint64{0xffff0010, 0x10}}, program.I32(-1)}, []int64{5})
	q := aggregate.New(&aggregate.Desc{ID: 2, Name: "@q", Func: program.AggQuantize})
	slots := make([]int64, q.Desc.NSlots())
	for _, v := range []int64{1, 2, 1000} {
		q.Desc.Update(slots, v, 1)
	}
	q.Add(nil, slots)

	rec := &output.Record{Known: true, First: true, Data: true}
	f, _ := format.Parse("hello\n")
	must(t, r.Begin(rec))
	must(t, r.Item(rec, &output.Item{Kind: program.ActPrintf, Format: f}))
	must(t, r.Item(rec, &output.Item{Kind: program.ActPrinta, Aggs: []*aggregate.Agg{q}}))
	must(t, r.End(rec))
	q.Printed = true
	must(t, r.Aggregations([]*aggregate.Agg{stacks, keyed, q}))
	want := "hello\n" +
		"@q 3\n" +
		"0x500;a.out`work 3\n" +
		"libc.so.6`0x9abc;a.out`main;a.out`work 40\n" +
		"libc.so.6`0x9abc;a.out`main;a.out`work 60\n" +
		"a:b;-1;0x10;vmlinux`do_sys:call 5\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if strings.Count(out.String(), "main;") != 2 {
		t.Errorf("frames not folded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
