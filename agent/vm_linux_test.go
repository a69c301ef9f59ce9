package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
	"github.com/dtrace-go/dtrace/internal/testutil/bpfobj"
	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output/perfetto"
)

// guestEnv selects, in the guest, the guest's half of a VM test
// (TestInGuest) and names the directory of the binaries; guestMode says
// what the guest runs while the agent traces.
const (
	guestEnv  = "AGENT_GUEST"
	guestMode = "AGENT_GUEST_MODE"
	guestName = "AGENT_GUEST_NAME"
)

// vm is a booted guest with the agent's port NAME (vm1, vm2) and, for
// the ping-pong, a port app; the host side of a VM test.
type vm struct {
	name, dir, dtrace, sock, app string
	out                          *lockedbuf.Buffer
	done                         chan error
	start                        time.Time
}

// build builds dtrace, the test programs and this test binary where the
// guests see them, and returns that directory; it skips the test where
// guests cannot run.
func build(t *testing.T) string {
	dir := guesttest.Host(t, guestEnv, ".agent-guest-")
	if testing.Short() {
		t.Skip("boots a guest")
	}
	testprog.BuildCmd(t, dir, "dtrace")
	testprog.BuildIn(t, dir, "gp", []string{"calls.c"})
	testprog.BuildIn(t, dir, "pp", []string{"pingpong.c"})
	guesttest.Self(t, dir, "agent.test")
	return dir
}

// boot boots guest name, which runs TestInGuest in mode with the
// binaries of dir (build); it returns once QEMU listens on the agent's
// socket.
func boot(t *testing.T, dir, name, mode string) *vm {
	v := &vm{name: name, dir: dir, dtrace: filepath.Join(dir, "dtrace"), done: make(chan error, 1)}
	// An earlier run's files would start the guest's workload before the
	// host traces, and end the host's run at once.
	for _, f := range []string{"go", "done-" + name, "booted-" + name} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	v.sock = filepath.Join(t.TempDir(), name+".sock")
	v.app = filepath.Join(t.TempDir(), "app.sock")
	// A guest whose kernel panics as it boots (guesttest.BootFailed)
	// is booted again, twice at most.
	for attempt := 1; ; attempt++ {
		guest := exec.Command(guesttest.RunKernel(t), "-t", "900", "-m", "1024", "-S", name+"="+v.sock, "-S", "app="+v.app,
			fmt.Sprintf("%s=%s %s=%s %s=%s %s -test.v -test.run '^TestInGuest$'", guestEnv, dir, guestMode, mode,
				guestName, name, filepath.Join(dir, "agent.test")))
		v.out = &lockedbuf.Buffer{}
		guest.Stdout, guest.Stderr = v.out, v.out
		v.start = time.Now()
		if err := guest.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- guest.Wait() }()
		// QEMU makes the socket before the guest boots: a boot that
		// fails ends the guest soon after.
		if err := v.waitBoot(t, done); attempt < 3 && guesttest.BootFailed(err, []byte(v.out.String())) {
			t.Logf("guest %s's kernel panicked as it booted; booting again:\n%s", name, v.out.String())
			os.Remove(v.sock)
			continue
		} else if err != nil {
			done <- err
		}
		v.done = done
		t.Cleanup(func() {
			guest.Process.Kill()
			<-v.done
		})
		v.waitFor(t, v.sock)
		return v
	}
}

// waitBoot waits until the guest booted (its TestInGuest wrote
// booted-NAME: run-kernel shows the guest's output only when it ends) or
// ended; it returns the guest's error if it ended.
func (v *vm) waitBoot(t *testing.T, done chan error) error {
	booted := filepath.Join(v.dir, "booted-"+v.name)
	for {
		select {
		case err := <-done:
			return err
		case <-time.After(100 * time.Millisecond):
			if _, err := os.Stat(booted); err == nil {
				return nil
			}
		}
	}
}

// waitFor waits until path exists, failing if the guest ends first.
func (v *vm) waitFor(t *testing.T, path string) {
	for _, err := os.Stat(path); err != nil; _, err = os.Stat(path) {
		select {
		case err := <-v.done:
			v.done <- err
			t.Fatalf("guest %s ended: %v\n%s", v.name, err, v.out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// host runs the host dtrace with args and a -x guest for each of vms
// until every guest wrote its done file, then interrupts it and waits for
// the guests to end; it returns the host dtrace's standard output. Once
// the host traces (its notice "guest NAME: matched" of the last guest:
// args without -q), ready runs.
func host(t *testing.T, vms []*vm, ready func(), args ...string) string {
	var gargs []string
	for _, v := range vms {
		gargs = append(gargs, "-x", "guest="+v.name+"="+v.sock)
	}
	last := vms[len(vms)-1]
	host := exec.Command(last.dtrace, append(gargs, args...)...)
	var hout, herr bytes.Buffer
	errr, errw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	host.Stdout, host.Stderr = &hout, errw
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	errw.Close()
	defer host.Process.Kill()
	traced := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(errr)
		for sc.Scan() {
			herr.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "guest "+last.name+": matched") {
				close(traced)
			}
		}
	}()
	if ready != nil {
		select {
		case <-traced:
		case <-time.After(5 * time.Minute):
			t.Fatalf("the host does not trace\n%s", herr.String())
		}
		ready()
	}
	for _, v := range vms {
		v.waitFor(t, filepath.Join(v.dir, "done-"+v.name))
	}
	host.Process.Signal(syscall.SIGINT)
	err = host.Wait()
	<-copied
	if err != nil {
		t.Fatalf("host dtrace: %v\n%s", err, herr.String())
	}
	t.Logf("host dtrace:\n%s%s", hout.String(), herr.String())
	for _, v := range vms {
		err := <-v.done
		v.done <- err
		t.Logf("guest %s ran %v:\n%s", v.name, time.Since(v.start).Round(time.Second), v.out.String())
		if err != nil {
			t.Fatalf("guest %s: %v", v.name, err)
		}
		if !strings.Contains(v.out.String(), "--- PASS: TestInGuest") {
			t.Errorf("TestInGuest did not pass in guest %s", v.name)
		}
	}
	return hout.String()
}

// TestGuestVM: a guest process calls getppid 1,234 times, twice; the
// host dtrace, with -x guest=vm1=SOCKET, counts them under vm1 ("vm1
// 2468"); when it exits, the agent detaches everything: the guest's BPF
// program, map and link lists are as before (TestInGuest checks).
func TestGuestVM(t *testing.T) {
	v := boot(t, build(t), "vm1", "count")
	out := host(t, []*vm{v}, nil, "-q", "-n", `syscall::getppid:entry /execname == "gp"/ { @ = count(); }`)
	if !regexp.MustCompile(`(?m)^  vm1 +2468$`).MatchString(out) {
		t.Errorf("no vm1 2468 line in\n%s", out)
	}
}

// TestTwoGuestsVM: two guests at once, each counting its own process's
// 2 x 1,234 getppid calls, under its own name in one output.
func TestTwoGuestsVM(t *testing.T) {
	dir := build(t)
	vms := []*vm{boot(t, dir, "vm1", "count"), boot(t, dir, "vm2", "count")}
	out := host(t, vms, nil, "-q", "-n", `syscall::getppid:entry /execname == "gp"/ { @ = count(); }`)
	for _, re := range []string{`(?m)^  vm1 +2468$`, `(?m)^  vm2 +2468$`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("no %s in\n%s", re, out)
		}
	}
}

// TestMergedTimelineVM: a host process and a guest process exchange 100
// messages ping-pong over a second virtio-serial port, traced on both
// sides into one -x oformat=perfetto file: it holds all 400 sends and
// receives (write and read slices on the channel), and on the merged
// timeline every receive comes after its send, to within the clock error
// bound the file reports for the guest: no mapping of one clock onto
// another can promise more than its bound, and a message whose one-way
// time is shorter than the bound (virtio-serial's are tens of µs) may
// show inverted by less than it.
func TestMergedTimelineVM(t *testing.T) {
	n, worst, bound := pingPong(t, build(t))
	t.Logf("%d of 100 round trips strictly in order; worst inversion %.1f µs, error bound %.1f µs", n, worst, bound)
	if worst > bound {
		t.Fatalf("a receive %.1f µs before its send, beyond the clock error bound of %.1f µs", worst, bound)
	}
}

// pingPong boots a guest, runs the ping-pong traced on both sides, checks
// the merged file and returns how many of the 100 round trips are in
// order on it (each receive after its send, both ways), the worst
// inversion and the guest clock's error bound, in µs.
func pingPong(t *testing.T, dir string) (int, float64, float64) {
	v := boot(t, dir, "vm1", "pingpong")
	pp := exec.Command(filepath.Join(v.dir, "pp"), "h", v.app, "100")
	var ppout bytes.Buffer
	pp.Stdout, pp.Stderr = &ppout, &ppout
	v.waitFor(t, v.app)
	file := filepath.Join(t.TempDir(), "t.json")
	// Once both sides trace, the host's pp connects and the guest's may
	// start (its go file).
	host(t, []*vm{v}, func() {
		if err := pp.Start(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(v.dir, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}, "-x", "oformat=perfetto", "-o", file, "-n", `
		syscall::read:entry, syscall::write:entry /execname == "pp" && arg0 == 10/ { self->in = 1; trace(arg2); }
		syscall::read:return, syscall::write:return /self->in/ { self->in = 0; trace(arg1); }`)
	defer pp.Process.Kill()
	if err := pp.Wait(); err != nil {
		t.Fatalf("host pp: %v\n%s", err, ppout.String())
	}
	s, err := perfetto.CheckFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("otherData: %v", s.OtherData)
	// Each side's sends (write slices: their start) and receives (read
	// slices: their end), in time order.
	type side struct{ send, recv []float64 }
	sides := map[bool]*side{false: {}, true: {}} // by "is the guest"
	for _, e := range s.Events {
		ph, name := e["ph"].(string), e["name"].(string)
		if ph != "B" && ph != "E" {
			continue
		}
		// Check read every number as a json.Number.
		pid, _ := e["pid"].(json.Number).Int64()
		ts, _ := e["ts"].(json.Number).Float64()
		if pid < 1<<22 && int(pid) != pp.Process.Pid {
			continue // another test's pp on this machine
		}
		sd := sides[pid >= 1<<22]
		switch {
		case ph == "B" && name == "write":
			sd.send = append(sd.send, ts)
		case ph == "E" && name == "read":
			sd.recv = append(sd.recv, ts)
		}
	}
	for _, sd := range sides {
		sort.Float64s(sd.send)
		sort.Float64s(sd.recv)
	}
	h, g := sides[false], sides[true]
	if len(h.send) != 100 || len(h.recv) != 100 || len(g.send) != 100 || len(g.recv) != 100 {
		t.Fatalf("host %d sends %d receives, guest %d sends %d receives; want 100 each",
			len(h.send), len(h.recv), len(g.send), len(g.recv))
	}
	machines, _ := s.OtherData["machines"].(map[string]any)
	vm1, _ := machines["vm1"].(map[string]any)
	bound, ok := vm1["clock_error_bound_ns"].(float64)
	if !ok {
		t.Fatalf("no clock error bound in %v", s.OtherData)
	}
	// How far the guest's times could move and keep every message in
	// order: the worst inversion is how much is missing.
	lo, hi := math.Inf(-1), math.Inf(1)
	strict := 0
	for i := 0; i < 100; i++ {
		// Ping i: the guest sends, the host receives; then the host
		// sends it back and the guest receives.
		if h.recv[i] > g.send[i] && g.recv[i] > h.send[i] {
			strict++
		}
		lo, hi = max(lo, h.send[i]-g.recv[i]), min(hi, h.recv[i]-g.send[i])
	}
	t.Logf("the guest's times would be in order moved by %.1f to %.1f µs (worst inversion %.1f µs)", lo, hi, max(lo, -hi, 0))
	return strict, max(lo, -hi, 0), bound / 1e3
}

// TestInGuest is the guest's half of the VM tests: it starts the agent
// on vm1, runs the mode's workload once the agent traces, writes the done
// file, waits for the agent to end with the host and checks that the
// BPF program, map and link lists are as before.
func TestInGuest(t *testing.T) {
	dir := os.Getenv(guestEnv)
	if dir == "" {
		t.Skip("runs in the guest of the VM tests")
	}
	before, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv(guestName)
	if err := os.WriteFile(filepath.Join(dir, "booted-"+name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	agent := exec.Command(filepath.Join(dir, "dtrace"), "-x", "agent=/dev/virtio-ports/"+name)
	logr, logw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	agent.Stderr = logw
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	logw.Close()
	lines := bufio.NewScanner(logr)
	for lines.Scan() {
		t.Logf("agent: %s", lines.Text())
		if strings.Contains(lines.Text(), "tracing for host") {
			break
		}
	}
	run := func(args ...string) {
		if out, err := exec.Command(filepath.Join(dir, args[0]), args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args, err, out)
		}
	}
	switch os.Getenv(guestMode) {
	case "count":
		run("gp", "1234")
		run("gp", "1234")
	case "pingpong":
		for _, err := os.Stat(filepath.Join(dir, "go")); err != nil; _, err = os.Stat(filepath.Join(dir, "go")) {
			time.Sleep(100 * time.Millisecond)
		}
		run("pp", "g", "/dev/virtio-ports/app", "100")
	}
	during, err := bpfobj.Kernel()
	if err != nil {
		t.Fatal(err)
	}
	if len(during.Links) <= len(before.Links) || len(during.Progs) <= len(before.Progs) {
		t.Errorf("tracing shows no programs or links of the agent: %v", during)
	}
	if err := os.WriteFile(filepath.Join(dir, "done-"+name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		for lines.Scan() {
			t.Logf("agent: %s", lines.Text())
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- agent.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("agent: %v", err)
		}
	case <-time.After(5 * time.Minute):
		agent.Process.Kill()
		t.Fatal("the agent did not end when the host did")
	}
	// The kernel frees maps in a work queue after their last reference
	// goes: give it a moment.
	var after bpfobj.Set
	for wait := 0; wait < 100; wait++ {
		if after, err = bpfobj.Kernel(); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(after) == fmt.Sprint(before) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("BPF objects before %v, after %v", before, after)
	}
	t.Logf("BPF lists as before: %d programs, %d maps, %d links (%d, %d, %d while tracing)", len(after.Progs),
		len(after.Maps), len(after.Links), len(during.Progs), len(during.Maps), len(during.Links))
}
