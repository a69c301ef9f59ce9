//go:build linux

package dtrace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScriptOutput runs D scripts of testdata and compares what they
// print with NAME.out:
//   - print-value: print() of values that are not pointers (scalars,
//     chars, strings, enums, arrays, bit-fields, structs with anonymous
//     members) as illumos prints them; the elves struct's output is
//     illumos's print/tst.anon.ksh.out.
//   - tracemem-nbytes: tracemem()'s third argument, the corpus's
//     tracemem/tst.tracemem.r.
//   - rwlock: rw_read_held(), rw_write_held(), rw_iswriter() on the
//     count word of Linux's queued rwlock.
func TestScriptOutput(t *testing.T) {
	for _, name := range []string{"print-value", "tracemem-nbytes", "rwlock"} {
		t.Run(name, func(t *testing.T) {
			h := openTest(t, Config{})
			src, err := os.ReadFile("testdata/" + name + ".d")
			if err != nil {
				t.Fatal(err)
			}
			startTest(t, h, name+".d", string(src))
			out := runOK(t, h)
			want, err := os.ReadFile("testdata/" + name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

// TestCopyout: copyoutstr() and copyout() write into the firing process
// (this test's own buffer, written to a pipe) with bpf_probe_write_user;
// skipped where the kernel refuses that helper (this machine's 6.18
// does; Debian's 6.1 takes it).
func TestCopyout(t *testing.T) {
	h := openTest(t, Config{})
	h.opts.Destructive = true
	h.opts.Quiet = true
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// Both clauses run on the one write: copyout() first, then
	// copyoutstr() over the start.
	pred := fmt.Sprintf("pid == %d && arg0 == %d && !done", os.Getpid(), w.Fd())
	src := fmt.Sprintf(`int done;
syscall::write:entry /%s/ { x = (char *)alloca(2); x[0] = 'Z'; x[1] = 'z'; copyout(x, arg1 + 6, 2); }
syscall::write:entry /%s/ { copyoutstr("HEY", arg1, 4); done = 1; exit(0); }`, pred, pred)
	if _, err := h.Compile(Source{Name: "copyout.d", Text: src}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		if strings.Contains(err.Error(), "bpf_probe_write_user") {
			t.Skipf("the kernel refuses bpf_probe_write_user: %v", err)
		}
		t.Fatal(err)
	}
	buf := []byte("hello world!")
	if _, err := w.Write(buf); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 12)
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatal(err)
	}
	if want := "HEY\x00o Zzrld!"; string(got) != want {
		t.Errorf("the pipe carried %q, want %q", got, want)
	}
	if status, err := h.Run(io.Discard, RunConfig{}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
}

// TestGetf: getf(fd) is the struct file * of the firing task's
// descriptor fd (BEGIN fires in this process), NULL outside its table;
// the run ends with dtrace's closing newline.
func TestGetf(t *testing.T) {
	h := openTest(t, Config{})
	h.opts.Quiet = true
	file, err := os.CreateTemp(t.TempDir(), "getf-*")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	src := fmt.Sprintf(`BEGIN { printf("%%s %%d %%d %%d\n", stringof(getf(%d)->f_path.dentry->d_name.name),
	getf(-1) == NULL, getf(0x7fffffff) == NULL, getf(%d)->f_pos); exit(0); }`, file.Fd(), file.Fd())
	if _, err := file.WriteString("12345"); err != nil {
		t.Fatal(err)
	}
	startTest(t, h, "getf.d", src)
	out := runOK(t, h)
	if want := filepath.Base(file.Name()) + " 1 1 5\n\n"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}
