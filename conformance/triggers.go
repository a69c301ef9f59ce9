package conformance

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Triggers are the workload programs tests name with @@trigger. The corpus
// does not ship them; we write our own. Two kinds exist:
//
//   - Go triggers, registered in goTriggers: the harness binary itself runs
//     them when started under the trigger's name (through a symlink made
//     by NewTriggers), so the process's execname is the trigger's name.
//     Programs that call TriggerMain first (cmd/dtconform, the conformance
//     test) can serve as triggers.
//   - External triggers: executables found in the directories listed in
//     the DTRACE_TRIGGERS environment variable (colon-separated), for
//     programs that must be C (USDT probes, pid-provider targets).
//
// A test whose trigger is in neither is skipped with the trigger's name.

// TriggersEnv lists extra directories holding trigger executables.
const TriggersEnv = "DTRACE_TRIGGERS"

// goTriggers maps a trigger name to its Go implementation; the function
// gets the trigger's arguments and returns the exit status.
var goTriggers = map[string]func(args []string) int{
	"longsleep":       longSleep,
	"delaydie":        delayDie,
	"periodic_output": periodicOutput,
	"bogus-ioctl":     bogusIoctl,
}

// TriggerMain runs a Go trigger and exits when the program was started
// under a trigger's name; otherwise it returns at once. Call it first in
// main (and in TestMain of tests that run the corpus).
func TriggerMain() {
	if f, ok := goTriggers[filepath.Base(os.Args[0])]; ok {
		os.Exit(f(os.Args[1:]))
	}
}

// TriggerSet resolves trigger names to executables.
type TriggerSet struct {
	dir      string // symlinks to the Go triggers
	external []string
}

// NewTriggers makes a directory under tmp with one symlink per Go trigger
// pointing at exe (a binary that calls TriggerMain), and adds the
// directories of DTRACE_TRIGGERS.
func NewTriggers(tmp, exe string) (*TriggerSet, error) {
	ts := &TriggerSet{dir: filepath.Join(tmp, "triggers")}
	if exe != "" {
		if err := os.MkdirAll(ts.dir, 0o755); err != nil {
			return nil, err
		}
		for name := range goTriggers {
			link := filepath.Join(ts.dir, name)
			_ = os.Remove(link)
			if err := os.Symlink(exe, link); err != nil {
				return nil, err
			}
		}
	} else {
		ts.dir = ""
	}
	for _, d := range filepath.SplitList(os.Getenv(TriggersEnv)) {
		if d != "" {
			ts.external = append(ts.external, d)
		}
	}
	return ts, nil
}

// Lookup returns the executable for trigger name.
func (ts *TriggerSet) Lookup(name string) (string, bool) {
	if ts == nil {
		return "", false
	}
	for _, d := range ts.external {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	if _, ok := goTriggers[name]; ok && ts.dir != "" {
		return filepath.Join(ts.dir, name), true
	}
	return "", false
}

// longSleep sleeps (nearly) forever, a process to look at.
func longSleep([]string) int {
	time.Sleep(10000 * time.Second)
	return 0
}

// delayDie exits after the number of nanoseconds in the "delay"
// environment variable.
func delayDie([]string) int {
	d := os.Getenv("delay")
	if d == "" {
		fmt.Fprintln(os.Stderr, "Delay in ns needed in delay env var.")
		return 1
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
	time.Sleep(time.Duration(ns))
	return 0
}

// periodicOutput writes a numbered line to /dev/null every second.
func periodicOutput([]string) int {
	f, err := os.OpenFile("/dev/null", os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 1
	}
	for i := 0; ; i++ {
		fmt.Fprintf(f, "periodic output %04d\n", i)
		time.Sleep(time.Second)
	}
}

// bogusIoctl spins in ioctl(-1, -1, NULL) calls until SIGUSR1, then opens
// /proc/self/mem in several modes and issues one bogus ioctl on each
// descriptor, for tests that record fds[].
func bogusIoctl([]string) int {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, unix.SIGUSR1)
	for {
		select {
		case <-usr1:
			return bogusIoctlFds()
		default:
		}
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, ^uintptr(0), ^uintptr(0), 0)
		time.Sleep(100 * time.Microsecond)
	}
}

func bogusIoctlFds() int {
	const file = "/proc/self/mem"
	var fds []int
	for _, flags := range []int{
		unix.O_RDONLY, unix.O_WRONLY, unix.O_RDWR,
		unix.O_RDWR | unix.O_APPEND | unix.O_CREAT | unix.O_DSYNC | unix.O_LARGEFILE |
			unix.O_NOCTTY | unix.O_NONBLOCK | unix.O_RSYNC | unix.O_SYNC | unix.O_TRUNC,
		unix.O_RDWR,
	} {
		fd, err := unix.Open(file, flags, 0o666)
		if err == nil {
			fds = append(fds, fd)
		}
	}
	if len(fds) > 0 {
		_, _ = unix.Seek(fds[len(fds)-1], 123, 0)
	}
	for _, fd := range fds {
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), ^uintptr(0), 0)
	}
	return 0
}
