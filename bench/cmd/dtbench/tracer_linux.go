//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ---------------------------------------------------------------------
// tracers running in the background

type tracer struct {
	name string
	argv []string
	key  string // the aggregation key that counts the loop's events; "" for the floor, noCheck for none
	ours bool
}

type running struct {
	t      tracer
	cmd    *exec.Cmd
	start  time.Time
	ready  chan time.Time // receives once, when "ready" is read
	done   chan struct{}  // closed when stdout is at EOF
	out    bytes.Buffer   // stdout after "ready"
	stderr bytes.Buffer
}

// startTracer starts t and waits until it prints "ready" on a line of its
// own (its BEGIN clause, printed once every probe is attached).
func startTracer(c *config, t tracer) (*running, time.Duration, error) {
	r := &running{t: t, ready: make(chan time.Time, 1), done: make(chan struct{})}
	r.cmd = exec.Command(t.argv[0], t.argv[1:]...)
	r.cmd.Stderr = &r.stderr
	pipe, err := r.cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		return nil, 0, err
	}
	go func() {
		defer close(r.done)
		br := bufio.NewReader(pipe)
		seen := false
		for {
			line, err := br.ReadString('\n')
			if !seen && strings.TrimSpace(line) == "ready" {
				seen = true
				r.ready <- time.Now()
			} else if seen {
				r.out.WriteString(line)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case at := <-r.ready:
		return r, at.Sub(r.start), nil
	case <-r.done:
		r.cmd.Wait()
		return nil, 0, fmt.Errorf("%s exited before it was ready: %s\n%s", t.name, r.cmd.ProcessState, r.stderr.String())
	case <-time.After(c.timeout):
		r.cmd.Process.Kill()
		r.cmd.Wait()
		return nil, 0, fmt.Errorf("%s not ready after %s:\n%s", t.name, c.timeout, r.stderr.String())
	}
}

// errHung marks a tracer that did not exit after SIGINT: the sample is
// dropped with a warning, the run goes on.
var errHung = errors.New("did not exit after SIGINT")

// stop sends SIGINT and waits for the tracer to print its aggregations
// and exit; it returns how long that took and the tracer's CPU time. A
// tracer still running 60 s later gets SIGINT again (every 60 s), and is
// killed after c.timeout.
func (r *running) stop(c *config) (time.Duration, usage, error) {
	t := time.Now()
	r.cmd.Process.Signal(syscall.SIGINT)
	deadline := time.After(c.timeout)
	tick := time.NewTicker(60 * time.Second)
	defer tick.Stop()
	var hung string
wait:
	for {
		select {
		case <-r.done:
			break wait
		case <-tick.C:
			hung = procState(r.cmd.Process.Pid)
			r.cmd.Process.Signal(syscall.SIGINT)
		case <-deadline:
			hung = procState(r.cmd.Process.Pid)
			r.cmd.Process.Kill()
			<-r.done
			r.cmd.Wait()
			return 0, usage{}, fmt.Errorf("%s %w within %s (%s)", r.t.name, errHung, c.timeout, hung)
		}
	}
	err := r.cmd.Wait()
	d := time.Since(t)
	if err != nil && !isSigint(err) {
		return d, usage{}, fmt.Errorf("%s: %v\n%s", r.t.name, err, r.stderr.String())
	}
	if hung != "" {
		fmt.Printf("   note: %s needed SIGINT again after 60 s (%s)\n", r.t.name, hung)
	}
	ru := r.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return d, usage{wall: time.Since(r.start), cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rssKB: ru.Maxrss}, nil
}

// procState describes a process that does not exit: its state and where
// it waits in the kernel.
func procState(pid int) string {
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	state := ""
	for _, line := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(line, "State:") {
			state = strings.TrimSpace(strings.TrimPrefix(line, "State:"))
		}
	}
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	return fmt.Sprintf("state %s, wchan %s", state, wchan)
}

func isSigint(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
			return true
		}
	}
	return false
}

// count is how many of the loop's events the tracer's output reports.
func (r *running) count() int64 {
	if r.t.key == "" {
		return floorCount(r.out.String())
	}
	if r.t.key == noCheck {
		return math.MaxInt64
	}
	v, ok := aggCounts(r.out.String())[r.t.key]
	if !ok {
		return -1
	}
	return v
}

// noCheck is the key of a tracer whose count is not checked.
const noCheck = "\x00"

// loopRun is one run of the loop program: its CPU and wall time.
type loopRun struct{ cpu, wall time.Duration }

// runLoop runs the loop program with m getppid() calls and returns its
// own timing.
func runLoop(c *config, m int64) (loopRun, error) { return runLoopNR(c, m, 0) }

// runLoopNR runs the loop program with m calls of system call nr
// (getppid for 0).
func runLoopNR(c *config, m int64, nr int) (loopRun, error) {
	argv := append(append([]string(nil), c.loop...), strconv.FormatInt(m, 10), strconv.Itoa(c.cpu))
	if nr != 0 {
		argv = append(argv, strconv.Itoa(nr))
	}
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		return loopRun{}, fmt.Errorf("%s: %v", loopName, err)
	}
	cpu, wall, err := loopTimes(string(out))
	return loopRun{cpu, wall}, err
}

// haveSyscall says whether our dtrace offers syscall::getppid:entry and
// syscall:::entry, and if not, why.
func haveSyscall(c *config) (bool, string) {
	out, err := exec.Command(c.dtrace, "-l", "-n", "syscall::getppid:entry").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "getppid") {
		return false, "syscall provider not available: dtrace -l -n syscall::getppid:entry: " + strings.TrimSpace(string(out))
	}
	return true, ""
}

// available drops our tracers when the syscall provider is missing, and
// says so.
func available(c *config, ts []tracer) []tracer {
	if c.noSyscall == "" {
		return ts
	}
	fmt.Printf("   ours: %s\n", c.noSyscall)
	var keep []tracer
	for _, t := range ts {
		if !t.ours {
			keep = append(keep, t)
		}
	}
	return keep
}
