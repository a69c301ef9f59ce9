//go:build linux

package edgetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// readmeNotRun are the README commands TestReadme does not run, as
// written there, and why. A command here that the README no longer has
// fails the test, so that the list stays the README's.
var readmeNotRun = map[string]string{
	"bash .ci/run": "the CI script, which runs this test",
	"go run ./cmd/dtconform -dtrace /tmp/dtrace            # summary per directory": "the whole corpus " +
		"(2-5 minutes); conformance.TestCorpus runs it in every go test as root",
}

// readmeCommand is a command of one of README.md's sh blocks.
type readmeCommand struct {
	block int    // the block's number, from 1
	line  int    // the command's first line in README.md
	text  string // as written, lines joined with newlines
}

// readmeCommands returns the commands of README.md's sh blocks: a
// command runs on until its quotes close and its line does not end in a
// backslash; comment lines between commands are left out.
func readmeCommands(t *testing.T, readme []byte) []readmeCommand {
	t.Helper()
	var cmds []readmeCommand
	block, in := 0, false
	var cur []string
	start := 0
	for i, line := range strings.Split(string(readme), "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```sh"):
			in, block = true, block+1
			continue
		case in && strings.HasPrefix(line, "```"):
			if len(cur) > 0 {
				t.Fatalf("README.md:%d: a command with unclosed quotes: %q", start, strings.Join(cur, "\n"))
			}
			in = false
			continue
		case !in:
			continue
		}
		trimmed := strings.TrimSpace(line)
		if len(cur) == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if len(cur) == 0 {
			start = i + 1
		}
		cur = append(cur, line)
		text := strings.Join(cur, "\n")
		if quotesClosed(text) && !strings.HasSuffix(trimmed, "\\") {
			cmds = append(cmds, readmeCommand{block, start, text})
			cur = nil
		}
	}
	return cmds
}

// quotesClosed reports whether every quote of the shell text s closes.
func quotesClosed(s string) bool {
	var q byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case q == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				q = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			q = c
		}
	}
	return q == 0
}

// dtracePID stands, in the README, for the pid of a dtrace running.
const dtracePID = "<dtrace pid>"

// runsOn reports whether a README command is a dtrace that runs until it
// is interrupted: neither a -c command nor exit() ends it.
func runsOn(text string) bool {
	return strings.HasPrefix(text, "dtrace ") && !strings.Contains(text, " -c ") && !strings.Contains(text, "exit(")
}

// dtraceNotice is what dtrace prints on standard error when all is well.
var dtraceNotice = regexp.MustCompile(`^dtrace: description '[^\n]*' matched [0-9]+ probes?$`)

// TestReadme runs every command of README.md's sh blocks, as written but
// for /tmp, which is the test's own directory, and "dtrace", which is the
// dtrace tested: each must exit 0 and a dtrace print nothing on standard
// error but its "matched N probes" notice. A dtrace that runs until
// interrupted runs until its probes are attached, then gets the block's
// commands that signal it (kill -USR1 <dtrace pid>: the snapshot must
// come out), then SIGINT. The commands are read from the README, so that
// the two cannot drift: the flow example's -c 'sh -c "producer | ..."'
// failed so (dtrace splits -c's command on blanks, quotes or not).
func TestReadme(t *testing.T) {
	testprog.NeedRoot(t, "BPF")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, readme)
	if len(cmds) < 8 {
		t.Fatalf("%d commands in README.md's sh blocks; the parser lost some", len(cmds))
	}
	seen := map[string]bool{}
	for _, c := range cmds {
		seen[c.text] = true
	}
	for text := range readmeNotRun {
		if !seen[text] {
			t.Errorf("readmeNotRun lists %q, which README.md no longer has", text)
		}
	}
	bin := t.TempDir()
	if err := os.Symlink(dtraceBin, filepath.Join(bin, "dtrace")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	blocks := map[int][]readmeCommand{}
	var order []int
	for _, c := range cmds {
		if len(blocks[c.block]) == 0 {
			order = append(order, c.block)
		}
		blocks[c.block] = append(blocks[c.block], c)
	}
	for _, n := range order {
		t.Run("block"+strconv.Itoa(n), func(t *testing.T) {
			tmp := t.TempDir()
			sh := func(c readmeCommand, text string) *exec.Cmd {
				text = strings.ReplaceAll(text, "/tmp/", tmp+"/")
				if strings.HasPrefix(text, "dtrace ") {
					text = "exec " + text // the shell's pid is dtrace's
				}
				cmd := exec.Command("sh", "-c", text)
				cmd.Dir, cmd.Env = root, env
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				return cmd
			}
			var on *running // a dtrace running until interrupted
			for _, c := range blocks[n] {
				if why, ok := readmeNotRun[c.text]; ok {
					t.Logf("README.md:%d: not run: %s", c.line, why)
					continue
				}
				if strings.Contains(c.text, dtracePID) {
					if on == nil {
						t.Fatalf("README.md:%d: %q, and no dtrace runs", c.line, c.text)
					}
					text := strings.ReplaceAll(c.text, dtracePID, strconv.Itoa(on.Cmd.Process.Pid))
					runToEnd(t, c, sh(c, text))
					if strings.Contains(c.text, "-USR1") {
						on.waitSnapshot(t, c, tmp)
					}
					continue
				}
				if on != nil {
					on.interrupt(t)
					on = nil
				}
				if runsOn(c.text) {
					on = startOn(t, c, sh(c, c.text))
					continue
				}
				runToEnd(t, c, sh(c, c.text))
			}
			if on != nil {
				on.interrupt(t)
			}
		})
	}
}

// runToEnd runs a README command that ends by itself (at most five
// minutes) and checks that it exits 0: a dtrace also prints something
// and nothing on standard error but its notices.
func runToEnd(t *testing.T, c readmeCommand, cmd *exec.Cmd) {
	t.Helper()
	begin := time.Now()
	r := testprog.StartCmd(t, cmd)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Minute):
		// The test's end kills its process group.
		t.Fatalf("README.md:%d: still running after 5 minutes: %s", c.line, c.text)
	}
	t.Logf("README.md:%d: %v", c.line, time.Since(begin).Round(time.Millisecond))
	if err := r.Err(); err != nil {
		t.Errorf("README.md:%d: %s: %v\nstdout:\n%.2000s\nstderr:\n%.2000s", c.line, c.text, err, r.Stdout.String(), r.Stderr.String())
		return
	}
	if isDtrace(c.text) {
		checkDtraceOutput(t, c, r.Stdout.String(), r.Stderr.String(), true)
	}
}

// isDtrace reports whether a README command runs dtrace itself.
func isDtrace(text string) bool {
	return strings.HasPrefix(text, "dtrace ") || strings.HasPrefix(text, "go run ./cmd/dtrace ")
}

// checkDtraceOutput fails the test when a dtrace printed more than its
// notices on standard error or, when it must have printed, nothing.
func checkDtraceOutput(t *testing.T, c readmeCommand, stdout, stderr string, printed bool) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if l != "" && !dtraceNotice.MatchString(l) {
			t.Errorf("README.md:%d: %s\nstandard error: %q", c.line, c.text, stderr)
			break
		}
	}
	if printed && strings.TrimSpace(stdout) == "" {
		t.Errorf("README.md:%d: %s printed nothing", c.line, c.text)
	}
}

// startOn starts a README dtrace that runs until interrupted and waits
// until its probes are attached (a bpf_link among its files: it handles
// SIGINT from before that on), at most two minutes.
func startOn(t *testing.T, c readmeCommand, cmd *exec.Cmd) *running {
	t.Helper()
	r := &running{Running: testprog.StartCmd(t, cmd)}
	r.readme = c
	fds := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "fd")
	if err := r.Await(2*time.Minute, func() bool { return attached(fds) }); err != nil {
		out, errs := r.output()
		t.Fatalf("README.md:%d: %s attached nothing: %v\nstdout:\n%.2000s\nstderr:\n%.2000s", c.line, c.text, err, out, errs)
	}
	return r
}

// attached reports whether the process whose fd directory is fds holds a
// BPF link.
func attached(fds string) bool {
	ents, _ := os.ReadDir(fds)
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && l == "anon_inode:bpf_link" {
			return true
		}
	}
	return false
}

// waitSnapshot waits (at most a minute) until a snapshot taken on
// SIGUSR1 is in the dtrace's output: its -o file or its standard output.
func (r *running) waitSnapshot(t *testing.T, c readmeCommand, tmp string) {
	t.Helper()
	file := ""
	if m := regexp.MustCompile(`-o (\S+)`).FindStringSubmatch(r.readme.text); m != nil {
		file = strings.ReplaceAll(m[1], "/tmp/", tmp+"/")
	}
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		out, _ := r.output()
		if file != "" {
			data, _ := os.ReadFile(file)
			out = string(data)
		}
		if strings.Contains(out, " by signal USR1 ===\n") {
			return
		}
	}
	t.Errorf("README.md:%d: %s: no snapshot by signal USR1 from the dtrace of README.md:%d", c.line, c.text, r.readme.line)
}

// interrupt sends SIGINT to a README dtrace, which must exit 0 within a
// minute without complaint.
func (r *running) interrupt(t *testing.T) {
	t.Helper()
	c := r.readme
	if err := r.Cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(time.Minute):
		t.Fatalf("README.md:%d: %s: still running a minute after SIGINT", c.line, c.text)
	}
	out, errs := r.output()
	if code := r.Cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("README.md:%d: %s: %v after SIGINT\nstderr:\n%.2000s", c.line, c.text, r.Cmd.ProcessState, errs)
	}
	checkDtraceOutput(t, c, out, errs, false)
}
