package main

import (
	"strings"
	"testing"
)

// TestEvalTimeExec: under -x evaltime=exec a process -c creates is held
// inside its execve, as dtrace-utils holds it, so proc:::exec-success
// (which fires as execve returns) and the new image's first system calls
// are traced; under every later hold they happened before tracing.
func TestEvalTimeExec(t *testing.T) {
	bin := buildDtrace(t)
	prog := `proc:::exec-success /pid == $target/ { printf("exec-success %s\n", execname); }
syscall::brk:entry /pid == $target/ { @brk = count(); }
proc:::exit /pid == $target/ { printf("exit %d\n", args[0]); }
END { printa("brk %@d\n", @brk); }`
	for _, et := range []string{"exec", "preinit", "postinit", "main", ""} {
		args := []string{"-q", "-c", "/bin/true", "-n", prog}
		if et != "" {
			args = append(args, "-x", "evaltime="+et)
		}
		out, err := dtraceCmd(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("evaltime=%s: %v\n%s", et, err, out)
		}
		o := string(out)
		seen := strings.Contains(o, "exec-success true\n")
		if seen != (et == "exec") || !strings.Contains(o, "exit 1\n") {
			t.Errorf("evaltime=%s: exec-success seen %v, want %v; exit seen once:\n%s", et, seen, et == "exec", o)
		}
		// The dynamic linker's brk() comes before the entry point:
		// traced under exec only.
		if brk := strings.Contains(o, "brk "); brk != (et == "exec") {
			t.Errorf("evaltime=%s: the dynamic linker's brk() traced %v, want %v:\n%s", et, brk, et == "exec", o)
		}
	}
}
