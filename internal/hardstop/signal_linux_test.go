//go:build linux

package hardstop

import (
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestSignalsEndRun: SIGINT and SIGTERM end a run as DTrace ends it: END
// fires, the aggregations print, and dtrace exits 0.
func TestSignalsEndRun(t *testing.T) {
	needRoot(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startDtrace(t, "-q", "-n", `BEGIN { printf("ready\n"); }
tick-1ms { @ticks = count(); @[probename] = count(); }
END { printf("end fired\n"); }`)
			r.WaitLine(t, "ready", time.Minute)
			// Let a few ticks be counted.
			time.Sleep(100 * time.Millisecond)
			if err := r.Cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := r.Wait(t, time.Minute); code != 0 {
				t.Errorf("exit status %d after %v, want 0; stderr %q", code, sig, r.Stderr.String())
			}
			out := r.Stdout.String()
			// END's output comes first, then the aggregations dtrace
			// prints at exit: @ticks's value alone, @'s key and value.
			re := regexp.MustCompile(`^ready\n+end fired\n+ +([1-9][0-9]*)\n+  tick-1ms +([1-9][0-9]*)\n+$`)
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Errorf("stdout after %v = %q, want END's line and both aggregations", sig, out)
			} else if m[1] != m[2] {
				t.Errorf("stdout after %v = %q: the two counts of one probe differ", sig, out)
			}
			if r.Stderr.String() != "" {
				t.Errorf("stderr %q", r.Stderr.String())
			}
		})
	}
}
