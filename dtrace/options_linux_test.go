//go:build linux

package dtrace

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestStatusRate checks that statusrate paces how soon exit() is seen:
// END runs about a statusrate after exit(); without the option at once.
func TestStatusRate(t *testing.T) {
	const src = `#pragma D option quiet
BEGIN { start = timestamp; }
tick-10ms /!done && timestamp - start > 300000000/ { done = 1; at = timestamp; exit(0); }
END { printf("%d\n", (timestamp - at) / 1000000); }`
	for _, tt := range []struct {
		rate     string
		min, max int // ms between exit() and END
	}{
		{"", 0, 500},
		{"2sec", 1500, 4000},
	} {
		h := openTest(t, Config{})
		if tt.rate != "" {
			if err := h.opts.Set("statusrate", tt.rate); err != nil {
				t.Fatal(err)
			}
		}
		startTest(t, h, "statusrate", src)
		out, status := runBounded(t, h, 20*time.Second)
		if status != 0 {
			t.Fatalf("exit status %d; output %q", status, out)
		}
		ms, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("statusrate=%q: output %q", tt.rate, out)
		}
		t.Logf("statusrate=%q: END %d ms after exit()", tt.rate, ms)
		if ms < tt.min || ms > tt.max {
			t.Errorf("statusrate=%q: END %d ms after exit(), want %d to %d", tt.rate, ms, tt.min, tt.max)
		}
		h.Close()
	}
}

// TestEvalTime checks where each evaltime holds a created process: what
// it has written by then (its constructor writes "ctor", main() "main")
// and, for a dynamically linked program, whether its libc is mapped yet
// (the dynamic linker runs before the entry point). A stripped static
// program has no main() to stop at: it is held at its entry point,
// without a warning, as dtrace-utils falls back silently.
func TestEvalTime(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("evaltime breakpoints are implemented for amd64 only")
	}
	dir := t.TempDir()
	dyn := testprog.BuildIn(t, dir, "evaltime", []string{"evaltime.c"})
	static := testprog.BuildIn(t, dir, "evaltime-static", []string{"evaltime.c"}, "-static")
	stripped := testprog.BuildIn(t, dir, "evaltime-stripped", []string{"evaltime.c"}, "-static", "-s")
	type evalCase struct {
		prog, evaltime string
		written        string // by the hold point
		libc           bool   // libc mapped at the hold point
	}
	cases := []evalCase{
		{dyn, "", "ctor\n", true}, // the default: postinit
		{stripped, "", "", false}, // quietly at the entry point
		{dyn, "exec", "", false},
		{dyn, "preinit", "", true},
		{dyn, "postinit", "ctor\n", true},
		{dyn, "main", "ctor\n", true},
		{static, "exec", "", false},
		{static, "preinit", "", false},
		{static, "main", "ctor\n", false},
		{stripped, "postinit", "", false},
		{stripped, "main", "", false},
	}
	// A 32-bit program (gcc -m32): its auxiliary vector's words and its
	// registers are i386's.
	if exec.Command("sh", "-c", "echo 'int main(void) { return 0; }' | gcc -m32 -x c -o /dev/null -").Run() == nil {
		dyn32 := testprog.BuildIn(t, dir, "evaltime-32", []string{"evaltime.c"}, "-m32")
		// Stripped, it is held where libc's __libc_start_main calls
		// main(), which it takes on the stack.
		stripped32 := testprog.BuildIn(t, dir, "evaltime-32-stripped", []string{"evaltime.c"}, "-m32", "-s")
		cases = append(cases, evalCase{dyn32, "exec", "", false}, evalCase{dyn32, "preinit", "", true},
			evalCase{dyn32, "main", "ctor\n", true}, evalCase{dyn32, "", "ctor\n", true},
			evalCase{stripped32, "main", "ctor\n", true}, evalCase{stripped32, "", "ctor\n", true})
	} else {
		t.Log("gcc -m32 cannot build a program here: no 32-bit case")
	}
	for _, tt := range cases {
		name := filepath.Base(tt.prog) + " evaltime=" + tt.evaltime
		o := NewOptions()
		if tt.evaltime != "" {
			if err := o.Set("evaltime", tt.evaltime); err != nil {
				t.Fatal(err)
			}
		}
		out, err := os.Create(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := o.StartProcess(true, tt.prog, nil, out, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		written, _ := os.ReadFile(out.Name())
		maps, _ := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/maps")
		if string(written) != tt.written {
			t.Errorf("%s: held after writing %q, want %q", name, written, tt.written)
		}
		// The program's image (evaltime=exec: not dtrace's, which
		// executes it; cmd/dtrace's TestEvalTimeExec).
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(p.Pid()) + "/exe"); exe != tt.prog {
			t.Errorf("%s: held in %s", name, exe)
		}
		if libc := strings.Contains(string(maps), "/libc.so"); libc != tt.libc {
			t.Errorf("%s: libc mapped %v at the hold point, want %v", name, libc, tt.libc)
		}
		if w := o.Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings %q", name, w)
		}
		// Once continued it runs to its end, constructor and main()
		// once each.
		p.Continue()
		select {
		case <-p.Exited():
		case <-time.After(10 * time.Second):
			p.Abandon()
			t.Fatalf("%s: did not exit within 10s of Continue", name)
		}
		if written, _ := os.ReadFile(out.Name()); string(written) != "ctor\nmain\n" {
			t.Errorf("%s: wrote %q in all", name, written)
		}
		out.Close()
	}
	// A program that cannot be executed fails -c under evaltime=exec
	// as under the others, with the reason.
	for _, et := range []string{"exec", "main"} {
		if _, err := NewOptions().startProcessAt(filepath.Join(dir, "out"), et); err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("evaltime=%s, a file without execute permission: %v", et, err)
		}
	}
	// A process that exits before its hold point fails -c, at once.
	start := time.Now()
	_, err := NewOptions().startProcessAt(dyn+" exit", "main")
	if err == nil || !strings.Contains(err.Error(), "exited before its hold point") || time.Since(start) > 10*time.Second {
		t.Errorf("exit in a constructor under evaltime=main: %v after %v", err, time.Since(start))
	}
}

// startProcessAt creates the command line cmd held at evaltime.
func (o *Options) startProcessAt(cmd, evaltime string) (*Process, error) {
	if err := o.Set("evaltime", evaltime); err != nil {
		return nil, err
	}
	return o.StartProcess(true, cmd, nil, io.Discard, io.Discard)
}

// TestEvalTimeGo holds a Go program linked with the C library: its
// runtime starts it at its own entry, never through __libc_start_main,
// so the default hold must not wait there for a call that never comes
// (the conformance triggers that are Go programs exited "before their
// hold point"). It is held at its entry point and then runs once.
func TestEvalTimeGo(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("evaltime breakpoints are implemented for amd64 only")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc for cgo")
	}
	dir := t.TempDir()
	src := "package main\n\n// int three(void) { return 3; }\nimport \"C\"\n\nimport \"os\"\n\nfunc main() {\n\tif C.three() == 3 {\n\t\tos.Stdout.WriteString(\"main\\n\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module cgoprog\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "cgoprog")
	// Linked by Go's own linker, as a program whose only C is the
	// standard library's (net, os/user) is: no C main(), entry at the
	// runtime's _rt0, libc mapped all the same.
	build := exec.Command("go", "build", "-ldflags=-linkmode=internal", "-o", prog, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=1", "CC="+gcc, "GOFLAGS=")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p, err := NewOptions().StartProcess(true, prog, nil, out, io.Discard)
	if err != nil {
		t.Fatalf("the default hold of a cgo program: %v", err)
	}
	maps, _ := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/maps")
	if !strings.Contains(string(maps), "/libc.so") {
		t.Errorf("libc not mapped at the hold point: the program is not the dynamically linked one this test is about:\n%s", maps)
	}
	if written, _ := os.ReadFile(out.Name()); len(written) != 0 {
		t.Errorf("held after writing %q, want nothing", written)
	}
	p.Continue()
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		p.Abandon()
		t.Fatal("did not exit within 10s of Continue")
	}
	if written, _ := os.ReadFile(out.Name()); string(written) != "main\n" {
		t.Errorf("wrote %q in all, want \"main\\n\"", written)
	}
}
