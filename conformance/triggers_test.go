package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

func TestGoTriggers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := NewTriggers(t.TempDir(), exe, "triggers")
	if err != nil {
		t.Fatal(err)
	}
	path, ok := ts.Lookup("delaydie")
	if !ok {
		t.Fatal("delaydie not registered")
	}
	if _, ok := ts.Lookup("no-such-trigger"); ok {
		t.Error("an unwritten trigger was found")
	}
	if _, err := exec.LookPath("cc"); err == nil {
		srcs, _ := filepath.Glob("triggers/*.c")
		if len(srcs) < 20 {
			t.Errorf("only %d C triggers", len(srcs))
		}
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			if _, ok := ts.Lookup(name); !ok {
				t.Errorf("C trigger %s not built: %v", name, ts.BuildErrors[name])
			}
		}
		for name, same := range sameTriggers {
			if p, ok := ts.Lookup(name); !ok || filepath.Base(p) != same {
				t.Errorf("trigger %s is %q, want C trigger %s", name, p, same)
			}
		}
		if p, ok := ts.Lookup("futex"); ok {
			out, status := testprog.Output(t, p, "2")
			if status != 0 || strings.Count(out, "\n") != 4 || !strings.Contains(out, "Child ") {
				t.Errorf("futex 2: exit status %d, output %q", status, out)
			}
		}
	}
	tests := []struct {
		env  string
		code int
	}{
		{"delay=1000", 0},
		{"", 1},
	}
	for _, tt := range tests {
		cmd := exec.Command(path)
		cmd.Env = []string{tt.env}
		if code := testprog.ExitStatus(t, cmd); code != tt.code {
			t.Errorf("delaydie with %q: exit %d, want %d", tt.env, code, tt.code)
		}
	}
}
