package flowtest

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
)

//go:embed testdata/flowprog.c
var flowprog string

// build compiles flowprog.c once per test under each of names (a process's
// execname is the name it was run by, which the D predicates tell the
// roles apart with) and returns the paths.
func build(t *testing.T, names ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF")
	}
	bin := testprog.BuildSource(t, "flowprog", flowprog, "-O2")
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range names {
		p := filepath.Join(filepath.Dir(bin), n)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// runLimit bounds every command a test runs.
const runLimit = 3 * time.Minute

// command runs a command with a time limit and returns its output. On
// the limit its whole process group is killed (stopped children too), and
// the wait for its output ends 10 seconds later whatever holds the pipe.
func command(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd.CombinedOutput()
}

// run runs a shell command line, failing the test on an error or when
// it outlives runLimit (it is killed then).
func run(t *testing.T, line string) func() {
	return func() {
		if out, err := command("/bin/sh", "-c", line); err != nil {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
}

// ints parses the lines of out made of space-separated integers.
func ints(t *testing.T, out string) [][]int64 {
	t.Helper()
	var rows [][]int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row []int64
		for _, f := range strings.Fields(line) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("line %q: %v\n%s", line, err, out)
			}
			row = append(row, n)
		}
		if row != nil {
			rows = append(rows, row)
		}
	}
	return rows
}

// A forked child starts with its parent's flow as it was at the fork: it
// sees what the parent set before, not what the parent set after, and
// the flow's id.
func TestFork(t *testing.T) {
	p := build(t, "flowfork")[0]
	out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::getppid:entry /execname == "flowfork"/ { flow->before = 42; printf("%d\n", flowid); }
syscall::getpgid:entry /execname == "flowfork"/ { flow->after = 7; }
syscall::getsid:entry /execname == "flowfork"/ { printf("%d %d %d\n", flow->before, flow->after, flowid); }
`, run(t, p+" fork"))
	rows := ints(t, out)
	if len(rows) == 2 && len(rows[0]) == 3 {
		// Records of two CPUs come out in CPU order.
		rows[0], rows[1] = rows[1], rows[0]
	}
	if len(rows) != 2 || len(rows[0]) != 1 || len(rows[1]) != 3 {
		t.Fatalf("want the parent's flowid and the child's line, got:\n%s", out)
	}
	if id, child := rows[0][0], rows[1]; child[0] != 42 || child[1] != 0 || child[2] != id || id == 0 {
		t.Errorf("child saw before=%d after=%d flowid=%d, want 42, 0, %d", child[0], child[1], child[2], id)
	}
}

// In producer | filter | consumer, where the producer writes each line
// with one write and the others read byte by byte and write each line on
// with one write, the flow set at each of the producer's writes is the one
// of the consumer's write of that line: 1,000 distinct values in order.
func TestPipeline(t *testing.T) {
	const n = 1000
	p := build(t, "flowproducer", "flowfilter", "flowconsumer")
	out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::write:entry /execname == "flowproducer"/ { flow->req = ++n; }
syscall::write:entry /execname == "flowconsumer"/ { printf("%d %d\n", timestamp, flow->req); }
`, run(t, fmt.Sprintf("%s produce %d | %s relay | %s relay >/dev/null", p[0], n, p[1], p[2])))
	inOrder(t, out, n)
}

// inOrder checks that out, lines of a timestamp and flow->req, holds n
// lines and that in time order (records of different CPUs come out in
// CPU order) the k-th line written out carried the flow of the k-th one
// sent.
func inOrder(t *testing.T, out string, n int) {
	t.Helper()
	rows := ints(t, out)
	if len(rows) != n {
		t.Fatalf("%d lines written out, want %d:\n%s", len(rows), n, out)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	for i, r := range rows {
		if r[1] != int64(i+1) {
			t.Fatalf("line %d written out with flow->req %d, want %d", i+1, r[1], i+1)
		}
	}
}

// A pool of 4 workers reads requests from one pipe and answers each over
// another: every answer carries the flow of its own request (the request
// number in the answer's bytes), 10,000 distinct values, though the
// workers' reads return in another order than they took the requests.
func TestPool(t *testing.T) {
	const n = 10000
	p := build(t, "flowpool")[0]
	out := tracetest.Trace(t, 0, `#pragma D option quiet
#pragma D option bufsize=16m
syscall::write:entry /execname == "flowpool" && arg2 == 16 && *(char *)copyin(arg1, 1) == 'R'/ { flow->req = ++n; }
syscall::write:entry /execname == "flowpool" && arg2 == 16 && *(char *)copyin(arg1, 1) == 'A'/
{
	printf("%d %d\n", flow->req, *(int64_t *)copyin(arg1 + 8, 8));
}
`, run(t, fmt.Sprintf("%s pool %d 4 >/dev/null", p, n)))
	rows := ints(t, out)
	if len(rows) != n {
		t.Fatalf("%d answers, want %d", len(rows), n)
	}
	seen := map[int64]bool{}
	wrong := 0
	for _, r := range rows {
		if seen[r[0]] {
			t.Errorf("flow->req %d answered twice", r[0])
		}
		seen[r[0]] = true
		if r[0] != r[1] {
			wrong++
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d answers carry another request's flow", wrong, n)
	}
}

// Over a unix stream and datagram socketpair and over loopback TCP and
// connected UDP, each line the receiver writes out carries the flow set
// at the sender's send of that line: 1..500 in order.
func TestSockets(t *testing.T) {
	const n = 500
	p := build(t, "flowsock")[0]
	for _, kind := range []string{"unix", "unixdgram", "tcp", "udp"} {
		t.Run(kind, func(t *testing.T) {
			out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::write:entry, syscall::sendto:entry /execname == "flowsock" && arg0 != 1/ { flow->req = ++n; }
syscall::write:entry /execname == "flowsock" && arg0 == 1/ { printf("%d %d\n", timestamp, flow->req); }
`, run(t, fmt.Sprintf("%s sock %s %d >/dev/null", p, kind, n)))
			inOrder(t, out, n)
		})
	}
}

// An eventfd read takes the flow of the first write since the last read:
// each of the child's lines carries the parent's flow of that round.
func TestEventfd(t *testing.T) {
	const n = 500
	p := build(t, "flowevent")[0]
	out := tracetest.Trace(t, 0, `#pragma D option quiet
syscall::write:entry /execname == "flowevent" && arg2 == 8/ { flow->req = ++n; }
syscall::write:entry /execname == "flowevent" && arg0 == 1/ { printf("%d %d\n", timestamp, flow->req); }
`, run(t, fmt.Sprintf("%s eventfd %d >/dev/null", p, n)))
	inOrder(t, out, n)
}

// A reader that takes many writes at once (cat's large reads) leaves no
// writes on file behind: with a table of 16,384 entries, 100,000 writes go
// through without a drop, and cat's last read starts in one of the writes
// its last pipeful held (64k of lines of 6 bytes: 15,000 is ample; a table
// that filled up leaves an older flow, some 75,000 before pruning).
func TestBulkReader(t *testing.T) {
	const n = 100000
	p := build(t, "flowbulk")[0]
	out := tracetest.Trace(t, 0, `#pragma D option quiet
#pragma D option flowsize=16384
syscall::write:entry /execname == "flowbulk"/ { flow->req = ++n; }
syscall::read:return /execname == "cat" && arg0 > 0/ { @ = max(flow->req); }
`, run(t, fmt.Sprintf("%s produce %d | cat >/dev/null", p, n)))
	rows := ints(t, out)
	if len(rows) != 1 || rows[0][0] < n-15000 {
		t.Errorf("cat's last read has flow->req %v, want one of the last pipeful's writes (%d or more of %d)", rows, n-15000, n)
	}
}
