package tracefs

import (
	"path/filepath"
	"testing"

	"github.com/dtrace-go/dtrace/internal/kernel"
)

// TestSystemFormats parses every format file of the running kernel.
func TestSystemFormats(t *testing.T) {
	root, err := kernel.MountTracefs()
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Events(root, "syscalls")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 100 {
		t.Fatalf("only %d syscall events", len(evs))
	}
	paths, _ := filepath.Glob(filepath.Join(root, "events", "*", "*", "format"))
	for _, p := range paths {
		ev := filepath.Base(filepath.Dir(p))
		grp := filepath.Base(filepath.Dir(filepath.Dir(p)))
		f, err := ReadFormat(root, grp, ev)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if f.Name != ev || len(f.Common) == 0 {
			t.Errorf("%s: name %q, %d common fields", p, f.Name, len(f.Common))
		}
	}
	f, err := ReadFormat(root, "syscalls", "sys_exit_read")
	if err != nil {
		t.Fatal(err)
	}
	if fl, ok := f.Field("ret"); !ok || fl.Type != "long" || fl.Size != 8 || !fl.Signed {
		t.Errorf("sys_exit_read ret = %+v, %v", fl, ok)
	}
}
