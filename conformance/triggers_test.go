package conformance

import (
	"os"
	"os/exec"
	"testing"
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
		if _, ok := ts.Lookup("pid-tst-args1"); !ok {
			t.Errorf("C trigger pid-tst-args1 not built: %v", ts.BuildErrors["pid-tst-args1"])
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
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tt.code {
			t.Errorf("delaydie with %q: exit %d, want %d", tt.env, code, tt.code)
		}
	}
}
