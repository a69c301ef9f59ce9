//go:build linux

package flamegraph

import (
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
	"github.com/dtrace-go/dtrace/program"
)

// domFrame is a frame of the DOM Chromium dumps.
type domFrame struct {
	N     string `xml:"data-n,attr"`
	W     int64  `xml:"data-w,attr"`
	Style string `xml:"style,attr"`
	Rect  struct {
		Width string `xml:"width,attr"`
		Fill  string `xml:"fill,attr"`
	} `xml:"rect"`
}

type dom struct {
	Ready   string     `xml:"data-ready,attr"`
	Matched string     `xml:"data-matched,attr"`
	Frames  []domFrame `xml:"g>g"`
}

// TestChromium draws @[ustack()] = count() at work's entry over 100
// calls: the SVG parses and has a frame work of 100; headless Chromium
// runs its script, which, asked through the URL to zoom to work and search
// for it, widens work to the whole graph, hides what is beside it and
// highlights it. An unwritable file is refused.
func TestChromium(t *testing.T) {
	file := filepath.Join(t.TempDir(), "work.svg")
	outtest.Renders(t, "flamegraph", "/nonexistent/f.svg", file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := parse(t, b)
	var work bool
	for _, f := range s.Frames {
		if strings.HasSuffix(f.N, "`work") && f.W == 100 && strings.HasPrefix(f.Title, f.N+" (100,") {
			work = true
		}
	}
	if !work {
		t.Fatalf("no frame work of 100: %+v", s.Frames)
	}

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium (Debian's chromium package)")
	}
	d, out := dump(t, chromium, file+"?z=work&s=work")
	if n, _ := strconv.Atoi(d.Ready); n != len(s.Frames) || n == 0 {
		t.Fatalf("script saw %q frames of %d:\n%s", d.Ready, len(s.Frames), out)
	}
	if d.Matched != "1" {
		t.Errorf("search matched %q frames, want 1", d.Matched)
	}
	for _, f := range d.Frames {
		hidden := strings.Contains(f.Style, "display: none")
		switch {
		case strings.HasSuffix(f.N, "`work"):
			if f.Rect.Width != "1180" || f.Rect.Fill != "rgb(230,0,230)" || hidden {
				t.Errorf("work after zoom and search: %+v", f)
			}
		case f.W < 100 && !hidden:
			t.Errorf("frame %s beside work still shown: %+v", f.N, f)
		}
	}
}

// dump loads url in headless Chromium and returns the DOM its script left.
func dump(t *testing.T, chromium, url string) (dom, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	var d dom
	if err := xml.Unmarshal(out, &d); err != nil {
		t.Fatalf("DOM does not parse: %v\n%s", err, out)
	}
	return d, out
}

// TestChromiumZoom zooms, in Chromium, into the frame that holds 75 of
// 100: it takes the whole width, its sibling is hidden, its parent stays.
func TestChromiumZoom(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium (Debian's chromium package)")
	}
	u := func(pcs ...uint64) program.Value { return program.Stack{PCs: pcs, User: true, PID: 1} }
	a := aggregate.New(&aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount})
	a.Add([]program.Value{u(0x2000, 0x1000)}, []int64{75})
	a.Add([]program.Value{u(0x3000, 0x1000)}, []int64{25})
	file := filepath.Join(t.TempDir(), "zoom.svg")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, []*aggregate.Agg{a}, syms{}, aggregate.SortOptions{}, "zoom"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d, out := dump(t, chromium, file+"?z=work")
	seen := 0
	for _, f := range d.Frames {
		hidden := strings.Contains(f.Style, "display: none")
		switch f.N {
		case "a.out`work":
			seen++
			if f.Rect.Width != "1180" || hidden {
				t.Errorf("work: %+v", f)
			}
		case "a.out`operator<<":
			seen++
			if !hidden {
				t.Errorf("sibling shown: %+v", f)
			}
		case "a.out`main", "all":
			seen++
			if hidden {
				t.Errorf("parent hidden: %+v", f)
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d frames seen:\n%s", seen, out)
	}
}
