package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Triggers are the workload programs tests name with @@trigger. The corpus
// does not ship them; we write our own. Three kinds exist:
//
//   - Go triggers, registered in goTriggers: the harness binary itself runs
//     them when started under the trigger's name (through a symlink made
//     by NewTriggers), so the process's execname is the trigger's name.
//     Programs that call TriggerMain first (cmd/dtconform, the conformance
//     test) can serve as triggers.
//   - C triggers: conformance/triggers/NAME.c, compiled by NewTriggers
//     with the system C compiler (frame pointers, no optimization), for
//     programs whose symbols, stacks, USDT probes or exact sequence of
//     system calls tests look at (a Go program makes system calls of its
//     own, from several threads).
//   - External triggers: executables found in the directories listed in
//     the DTRACE_TRIGGERS environment variable (colon-separated).
//
// A test whose trigger is in none of them is skipped with the trigger's name.
//
// The shell scripts of conformance/triggers (NAME.sh) are triggers of the
// shell tests, which run them from test/triggers (ShellOptions.Triggers).

// sameTriggers maps a trigger name to the C trigger that serves for it: the
// tests that name it want the very same program.
var sameTriggers = map[string]string{
	// tst.raise3 raises SIGINT at ioctl entry, tst.raise2 at its return.
	"raise-tst-raise3": "raise-tst-raise2",
}

// TriggersEnv lists extra directories holding trigger executables.
const TriggersEnv = "DTRACE_TRIGGERS"

// goTriggers maps a trigger name to its Go implementation; the function
// gets the trigger's arguments and returns the exit status.
var goTriggers = map[string]func(args []string) int{
	"longsleep": longSleep,
	"delaydie":  delayDie,
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
	dir      string // symlinks to the Go triggers, built C triggers
	built    map[string]bool
	external []string
	// BuildErrors lists C triggers that failed to compile, by name.
	BuildErrors map[string]error
}

// cFlags keep every frame and symbol of a C trigger where tests expect it.
var cFlags = []string{"-O0", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-fno-optimize-sibling-calls"}

// NewTriggers makes a directory under tmp with one symlink per Go trigger
// pointing at exe (a binary that calls TriggerMain; "" for none), compiles
// the C triggers in csrc ("" for none) into it, and adds the directories of
// DTRACE_TRIGGERS.
func NewTriggers(tmp, exe, csrc string) (*TriggerSet, error) {
	ts := &TriggerSet{dir: filepath.Join(tmp, "triggers"), built: map[string]bool{}, BuildErrors: map[string]error{}}
	if err := os.MkdirAll(ts.dir, 0o755); err != nil {
		return nil, err
	}
	if csrc != "" {
		srcs, _ := filepath.Glob(filepath.Join(csrc, "*.c"))
		cc, ccErr := exec.LookPath("cc")
		var names []string
		for _, src := range srcs {
			name := strings.TrimSuffix(filepath.Base(src), ".c")
			if ccErr != nil {
				ts.BuildErrors[name] = ccErr
				continue
			}
			names = append(names, name)
		}
		errs := buildEach(names, func(name string) error {
			args := append(append([]string{}, cFlags...), "-o", filepath.Join(ts.dir, name), filepath.Join(csrc, name+".c"))
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
		for _, name := range names {
			if err, failed := errs[name]; failed {
				ts.BuildErrors[name] = err
			} else {
				ts.built[name] = true
			}
		}
	}
	if exe != "" {
		for name := range goTriggers {
			if ts.built[name] {
				continue // a C trigger of the name was built: it wins
			}
			link := filepath.Join(ts.dir, name)
			_ = os.Remove(link)
			if err := os.Symlink(exe, link); err != nil {
				return nil, err
			}
		}
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
	if same, ok := sameTriggers[name]; ok && ts.built[same] {
		return filepath.Join(ts.dir, same), true
	}
	if ts.built[name] {
		return filepath.Join(ts.dir, name), true
	}
	if _, err := os.Lstat(filepath.Join(ts.dir, name)); err == nil {
		if _, ok := goTriggers[name]; ok {
			return filepath.Join(ts.dir, name), true
		}
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
		// The message is written from a buffer with a NUL after it,
		// as C's stdio buffer has: tests copyinstr() write's buffer
		// with no size, which reads to the first NUL.
		// A []byte conversion of the literal is not enough: the
		// compiler serves msg[:len-1] from the string data without
		// the NUL. append copies the NUL into memory of our own.
		msg := append(make([]byte, 0, 64), "Delay in ns needed in delay env var.\n\x00"...)
		os.Stderr.Write(msg[:len(msg)-1])
		return 1
	}
	ns, _ := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
	time.Sleep(time.Duration(ns))
	return 0
}

// buildEach runs build for each name, as many at once as there are CPUs,
// and returns the errors by name.
func buildEach(names []string, build func(name string) error) map[string]error {
	errs := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := build(name); err != nil {
				mu.Lock()
				errs[name] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}
