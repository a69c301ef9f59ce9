package pprof

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

type syms struct{}

func (syms) KernelSym(addr uint64) (string, string, uint64, bool) {
	return "vmlinux", "ksys_read", 4, addr >= 0xffff0000
}

func (syms) UserSym(pid int, addr uint64) (string, string, uint64, bool) {
	switch {
	case addr >= 0x2000:
		return "/nonexistent/a.out", "work", addr - 0x2000, true
	case addr >= 0x1000:
		return "/nonexistent/a.out", "main", addr - 0x1000, true
	}
	return "", "", 0, false
}

// TestProfile writes two stack aggregations and a scalar one: the
// profile parses, has a sample type per stack aggregation, shares
// locations and functions, and keeps the other keys as labels.
func TestProfile(t *testing.T) {
	u := program.Stack{PCs: []uint64{0x2004, 0x1010, 0x10, 0}, User: true, PID: 9}
	calls := aggregate.New(&aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount})
	calls.Add([]program.Value{u}, []int64{100})
	bytesAgg := aggregate.New(&aggregate.Desc{ID: 1, Name: "@bytes", Func: program.AggSum})
	bytesAgg.Add([]program.Value{program.String("a.out"), program.Stack{PCs: []uint64{0xffff0010}}, u, program.I32(-2)}, []int64{4096})
	scalar := aggregate.New(&aggregate.Desc{ID: 2, Name: "@n", Func: program.AggCount})
	scalar.Add(nil, []int64{1})

	var buf bytes.Buffer
	if err := Write(&buf, []*aggregate.Agg{calls, bytesAgg, scalar}, syms{}, aggregate.SortOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[0].Type != "@" || p.SampleType[1].Type != "bytes" || p.SampleType[1].Unit != "sum" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	if len(p.Sample) != 2 || len(p.Function) != 3 || len(p.Location) != 4 {
		t.Fatalf("samples %d functions %d locations %d:\n%s", len(p.Sample), len(p.Function), len(p.Location), p)
	}
	s0, s1 := p.Sample[0], p.Sample[1]
	if s0.Value[0] != 100 || s0.Value[1] != 0 || s1.Value[1] != 4096 {
		t.Errorf("values %v %v", s0.Value, s1.Value)
	}
	name := func(l *profile.Location) string {
		if len(l.Line) == 0 {
			return "?"
		}
		return l.Line[0].Function.Name
	}
	var got []string
	for _, l := range s1.Location {
		got = append(got, name(l))
	}
	// Innermost first: the kernel stack runs on top of the user one.
	if want := "ksys_read work main ?"; join(got) != want {
		t.Errorf("locations %q, want %q", join(got), want)
	}
	if s1.Label["key0"][0] != "a.out" || s1.NumLabel["key3"][0] != -2 {
		t.Errorf("labels %v %v", s1.Label, s1.NumLabel)
	}
	if s0.Location[0] != s1.Location[1] {
		t.Errorf("work's location not shared")
	}
}

func join(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}
