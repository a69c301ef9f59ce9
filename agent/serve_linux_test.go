package agent

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output"
)

// collect is a Handler that keeps what it is given.
type collect struct {
	mu   sync.Mutex
	recs []Record
	msgs []string
}

func (c *collect) Record(g *Guest, r *Record) {
	c.mu.Lock()
	c.recs = append(c.recs, *r)
	c.mu.Unlock()
}

func (c *collect) Message(g *Guest, text string) {
	c.mu.Lock()
	c.msgs = append(c.msgs, text)
	c.mu.Unlock()
}

// TestServe runs an agent on this machine over a socket and a host
// against it (session).
func TestServe(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if testing.Short() {
		t.Skip("traces")
	}
	calls := testprog.Build(t, "agentcalls", []string{"calls.c"})
	sock := filepath.Join(t.TempDir(), "vm.sock")
	var logw syncBuffer
	served, err := ServeSocket(sock, &logw)
	if err != nil {
		t.Fatal(err)
	}
	session(t, func() (*Guest, error) { return Dial("vm1", sock, output.Monotonic) }, served, &logw, calls)
}

// syncBuffer is a bytes.Buffer that an agent may write while a test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// session runs a host against an agent on this machine (dial connects
// to it; served gets its end, logw its log): the program runs with the
// host's options, records come back as text and typed actions with
// their thread and a time on the host's clock, the count of calls (a
// process built from calls.c, counted by its name) comes back at the
// end, and nothing stays attached.
func session(t *testing.T, dial func() (*Guest, error), served <-chan error, logw *syncBuffer, calls string) {
	before := links(t)
	g, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(calls)
	n, err := g.Start(Program{
		Sources: []Source{{Name: "x", Text: fmt.Sprintf(`syscall::getppid:entry /execname == %[1]q/ { @[probefunc] = count(); }
			syscall::getppid:entry /execname == %[1]q && !done/ { done = 1; printf("first %%d\n", pid); }`, name), Kind: 0}},
		Options: []string{"quiet", "switchrate=50ms"},
	})
	if err != nil || n != 2 {
		t.Fatalf("Start: %d probes, %v", n, err)
	}
	if during := links(t); during == before {
		t.Errorf("tracing holds no BPF objects: %s", during)
	}
	var h collect
	go g.Run(&h, 20*time.Millisecond)
	start := output.Monotonic()
	cmd := exec.Command(calls, "1234")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	end := output.Monotonic()
	time.Sleep(200 * time.Millisecond)
	aggs, status, err := g.Stop(time.Minute)
	if err != nil || status != 0 {
		t.Fatalf("Stop: status %d, %v", status, err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v\n%s", err, logw.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the agent did not end with the host\n%s", logw.String())
	}
	if len(aggs) != 1 || len(aggs[0].Entries) != 1 || *aggs[0].Entries[0].Key[0].Str != "getppid" ||
		aggs[0].Entries[0].Data[0] != 1234 {
		t.Errorf("aggregations %+v", aggs)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.recs) != 1 {
		t.Fatalf("records %+v", h.recs)
	}
	r := h.recs[0]
	pid := cmd.Process.Pid
	if r.Text != fmt.Sprintf("first %d\n", pid) || r.PID != pid || r.TID != pid || r.Process != name && r.Process != "" ||
		len(r.Actions) != 1 || r.Actions[0].Action != "printf" || r.Probe.Function != "getppid" {
		t.Errorf("record %+v", r)
	}
	// Same machine, same clock: the mapped time is within the run.
	if r.Time < start || r.Time > end {
		t.Errorf("record at %d, run from %d to %d", r.Time, start, end)
	}
	if off, bound, samples := g.Clock.Estimate(); samples < 4*calibration || bound > uint64(50*time.Millisecond) ||
		off > int64(bound) || -off > int64(bound) {
		t.Errorf("clock offset %d bound %d from %d samples", off, bound, samples)
	}
	if after := links(t); after != before {
		t.Errorf("BPF links before %q, after %q", before, after)
	}
	if !strings.Contains(logw.String(), "tracing for host host") {
		t.Errorf("log %q", logw.String())
	}
}

// links counts the BPF objects (links, programs, maps) this process holds
// open, to see that the agent left none.
func links(t *testing.T) string {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "anon_inode:bpf") {
			n[l]++
		}
	}
	return fmt.Sprint(n)
}

// TestServeRefuses: an agent whose host speaks another version answers
// its hello (so that the host can say which) and ends with the same
// clear message; garbage after the hello ends it with an error.
func TestServeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(c *Conn)
		want string
	}{
		{"older", func(c *Conn) { c.Send(MsgHello, Hello{Magic: magic, Version: 1, Machine: "h1"}) },
			"the host (h1) speaks dtrace agent protocol version 1, this dtrace speaks version 2: run the same dtrace on both sides"},
		{"garbage", func(c *Conn) {
			c.Send(MsgHello, Hello{Magic: magic, Version: Version, Machine: "h1"})
			c.w.Write([]byte{0, 0, 0, 0})
		}, "garbage message: length 0"},
	} {
		host, agent := net.Pipe()
		host.SetDeadline(time.Now().Add(time.Minute))
		agent.SetDeadline(time.Now().Add(time.Minute))
		served := make(chan error, 1)
		go func() { served <- Serve(agent, io.Discard) }()
		c := NewConn(host)
		go tc.send(c)
		var h Hello
		if typ, body, err := c.Receive(); err != nil || expect(typ, MsgHello, "a hello", body, &h) != nil || h.Version != Version {
			t.Errorf("%s: the agent's hello: %q %s %v", tc.name, typ, body, err)
		}
		if err := <-served; err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		host.Close()
		agent.Close()
	}
}
