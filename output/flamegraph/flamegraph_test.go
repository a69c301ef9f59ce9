package flamegraph

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

type syms struct{}

func (syms) KernelSym(addr uint64) (string, string, uint64, bool) { return "", "", 0, false }

func (syms) UserSym(pid int, addr uint64) (string, string, uint64, bool) {
	switch {
	case addr >= 0x3000:
		return "/bin/a.out", "operator<<", 0, true
	case addr >= 0x2000:
		return "/bin/a.out", "work", 0, true
	}
	return "/bin/a.out", "main", 0, true
}

// frame is a <g class="f"> of the SVG as encoding/xml reads it.
type frame struct {
	Class string `xml:"class,attr"`
	N     string `xml:"data-n,attr"`
	W     int64  `xml:"data-w,attr"`
	D     int    `xml:"data-d,attr"`
	Title string `xml:"title"`
	Rect  struct {
		Width string `xml:"width,attr"`
	} `xml:"rect"`
}

type svg struct {
	XMLName xml.Name `xml:"svg"`
	Frames  []frame  `xml:"g>g"`
	Script  string   `xml:"script"`
}

// parse reads the SVG with encoding/xml.
func parse(t *testing.T, b []byte) svg {
	t.Helper()
	var s svg
	if err := xml.Unmarshal(b, &s); err != nil {
		t.Fatalf("SVG does not parse: %v\n%s", err, b)
	}
	return s
}

func TestGraph(t *testing.T) {
	u := func(pcs ...uint64) program.Value { return program.Stack{PCs: pcs, User: true, PID: 1} }
	a := aggregate.New(&aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount})
	a.Add([]program.Value{u(0x2000, 0x1000)}, []int64{75})
	a.Add([]program.Value{u(0x3000, 0x1000)}, []int64{25})
	scalar := aggregate.New(&aggregate.Desc{ID: 1, Name: "@n", Func: program.AggCount})
	scalar.Add(nil, []int64{5})
	var b bytes.Buffer
	if err := Write(&b, []*aggregate.Agg{a, scalar}, syms{}, aggregate.SortOptions{}, "t<1>"); err != nil {
		t.Fatal(err)
	}
	s := parse(t, b.Bytes())
	got := map[string]frame{}
	for _, f := range s.Frames {
		got[f.N] = f
	}
	if len(s.Frames) != 4 {
		t.Fatalf("%d frames: %+v", len(s.Frames), s.Frames)
	}
	for name, want := range map[string]struct {
		w     int64
		d     int
		width float64
	}{
		"all": {100, 0, 1180}, "a.out`main": {100, 1, 1180}, "a.out`work": {75, 2, 885}, "a.out`operator<<": {25, 2, 295},
	} {
		f, ok := got[name]
		if !ok {
			t.Errorf("no frame %s", name)
			continue
		}
		width, _ := strconv.ParseFloat(f.Rect.Width, 64)
		if f.W != want.w || f.D != want.d || width != want.width || !strings.HasPrefix(f.Title, name+" ("+strconv.FormatInt(want.w, 10)) {
			t.Errorf("%s: %+v", name, f)
		}
	}
	if !strings.Contains(s.Script, "function zoom") || !strings.Contains(s.Script, "function search") {
		t.Errorf("script missing")
	}
	// No stack aggregation: an empty graph that still parses.
	b.Reset()
	if err := Write(&b, []*aggregate.Agg{scalar}, syms{}, aggregate.SortOptions{}, "x"); err != nil {
		t.Fatal(err)
	}
	if s := parse(t, b.Bytes()); len(s.Frames) != 0 {
		t.Errorf("frames without stacks: %+v", s.Frames)
	}
}
