package formats

import (
	"io"
	"testing"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
)

// TestRegistry checks what the option parser relies on: names are
// unique, Streaming formats are chosen by oformat and the others by an
// option of their own name, and every format can be made.
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		if seen[f.Name] {
			t.Errorf("format %q registered twice", f.Name)
		}
		seen[f.Name] = true
		switch {
		case f.New == nil:
			t.Errorf("format %q has no constructor", f.Name)
		case f.When == output.Streaming && f.Option != "oformat":
			t.Errorf("streaming format %q is chosen by -x %s, not oformat", f.Name, f.Option)
		case f.When != output.Streaming && f.Option != f.Name:
			t.Errorf("format %q is chosen by -x %s, not by its name", f.Name, f.Option)
		}
		for _, p := range f.Params {
			if seen[p] {
				t.Errorf("format %q's option %q is taken", f.Name, p)
			}
			seen[p] = true
		}
	}
	if Streaming("text") == nil || Streaming("pprof") != nil || Streaming("nope") != nil {
		t.Errorf("Streaming finds the wrong formats")
	}
	if got := Names(); len(got) < 4 || got[0] != "text" {
		t.Errorf("oformat names %v, want text first", got)
	}
	for _, name := range Names() {
		r, err := Streaming(name).New(output.Env{Text: func(w io.Writer) output.Printer { return text.New(text.Config{Stderr: w}) }})
		if err != nil || r == nil {
			t.Errorf("-x oformat=%s: %v", name, err)
		}
	}
}
