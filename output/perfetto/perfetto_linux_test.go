//go:build linux

package perfetto

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
)

// TestTimeline: -x oformat=perfetto -o FILE on 500 calls of the target's
// work() gives a file that follows the trace-event rules with exactly 500
// closed slices on the target's one thread; without -o the file goes to
// standard output, with the aggregations in otherData and main's entry,
// whose return comes after tracing stops, closed at exit.
func TestTimeline(t *testing.T) {
	dtrace, target := outtest.Build(t)
	file := filepath.Join(t.TempDir(), "t.json")
	// A stale file is replaced, not appended to.
	if err := os.WriteFile(file, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, status := outtest.Run(t, dtrace, "-x", "oformat=perfetto", "-o", file, "-n",
		`pid$target:a.out:work:entry, pid$target:a.out:work:return { trace(arg0); }`, "-c", target+" 500")
	if status != 0 {
		t.Fatalf("status %d\n%s", status, stderr)
	}
	s, err := CheckFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.Slices != 500 || s.Tracks != 1 || s.Instants != 0 {
		t.Errorf("%d slices on %d tracks, %d instants; want 500 on 1, 0", s.Slices, s.Tracks, s.Instants)
	}
	if s.OtherData["unmatched_returns"] != float64(0) || s.OtherData["entries_closed_at_exit"] != float64(0) {
		t.Errorf("otherData %v", s.OtherData)
	}
	var names []string
	for _, n := range s.Processes {
		names = append(names, n)
	}
	if len(names) != 1 || names[0] != filepath.Base(target) {
		t.Errorf("process names %v, want [%s]", names, filepath.Base(target))
	}

	stdout, stderr, status := outtest.Run(t, dtrace, "-x", "oformat=perfetto", "-n",
		`syscall::getppid:entry /pid == $target/ { @calls = count(); }
		pid$target:a.out:main:entry { printf("main %d\n", pid); }`, "-c", target+" 77")
	if status != 0 {
		t.Fatalf("status %d\n%s", status, stderr)
	}
	if s, err = Check([]byte(stdout)); err != nil {
		t.Fatal(err)
	}
	if s.Slices != 1 || s.OtherData["entries_closed_at_exit"] != float64(1) {
		t.Errorf("%d slices, otherData %v", s.Slices, s.OtherData)
	}
	if !strings.Contains(stdout, `"name":"calls","function":"count","entries":[{"keys":[],"value":77}]`) ||
		!strings.Contains(stdout, `"text":"main `) {
		t.Errorf("aggregation or printf text missing:\n%s", stdout)
	}
}
