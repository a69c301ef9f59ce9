//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestMessages checks dtrace(1M)'s words and exit statuses for
// descriptions that match nothing, overspecified descriptions, probe ids,
// listings and -p of a process that does not exist: the corpus's
// dtrace-util shell tests show dtrace-utils' words.
func TestMessages(t *testing.T) {
	bin := buildDtrace(t)
	tests := []struct {
		args   []string
		stdout string
		stderr string
		status int
	}{
		// A listing reports what matched nothing; one that lists
		// nothing at all exits 1 (issue 21; dtrace-utils exits 0), one
		// that lists a probe exits 0.
		{[]string{"-lm", "foobar"}, "   ID   PROVIDER            MODULE                          FUNCTION NAME\n",
			"dtrace: failed to match :foobar::: No probe matches description\n", 1},
		{[]string{"-li", "-3"}, "   ID   PROVIDER            MODULE                          FUNCTION NAME\n",
			"dtrace: failed to match :::-3: No probe matches description\n", 1},
		{[]string{"-li", "2-2"}, "   ID   PROVIDER            MODULE                          FUNCTION NAME\n    2     dtrace                                                     END\n",
			"dtrace: failed to match :::-2: No probe matches description\n", 0},
		// Programs on the command line have no line numbers.
		{[]string{"-P", "foofile"}, "", "dtrace: invalid probe specifier foofile: probe description foofile::: does not match any probes\n", 1},
		{[]string{"-n", "BEGIN { x = ; }"}, "", "dtrace: invalid probe specifier BEGIN { x = ; }: syntax error near \";\"\n", 1},
		// Overspecification is judged on the text given.
		{[]string{"-P", "profile:::"}, "", "dtrace: invalid probe specifier profile:::: invalid probe description \"profile:::\": Overspecified probe description\n", 1},
		{[]string{"-m", ":genunix::"}, "", "dtrace: invalid probe specifier :genunix::: invalid probe description \":genunix::\": Overspecified probe description\n", 1},
		{[]string{"-m", `genunix:{printf("FOUND");}`}, "", "dtrace: invalid probe specifier genunix:{printf(\"FOUND\");}: probe description genunix::: does not match any probes\n", 1},
		// An empty first field is not one of the fields.
		{[]string{"-f", "::read:"}, "", "dtrace: invalid probe specifier ::read:: probe description :read:: does not match any probes\n", 1},
		// Numbers are probe ids.
		{[]string{"-i", "0"}, "", "dtrace: invalid probe specifier 0: invalid probe identifier 0: Unknown probe identifier\n", 1},
		{[]string{"-f", "4.56"}, "", "dtrace: invalid probe specifier 4.56: probe identifier 4 not permitted when specifying functions\n", 1},
		{[]string{"-i", "2-2"}, "", "dtrace: invalid probe specifier 2-2: probe description :::-2 does not match any probes\n", 1},
		{[]string{"-p", "4194304", "-n", "BEGIN { exit(0); }"}, "", "dtrace: No such process\n", 1},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			cmd.Env = append(withoutTesting(os.Environ()), "_DTRACE_TESTING=t")
			stdout, stderr, status := testprog.Run(t, cmd)
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			if stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", stdout, tt.stdout)
			}
			if stderr != tt.stderr {
				t.Errorf("stderr %q, want %q", stderr, tt.stderr)
			}
		})
	}
}

// TestGrabZombieMessage: dtrace -p of a process that exited but was not
// reaped fails as dtrace-utils' does, with the words and status of a
// process that does not exist.
func TestGrabZombieMessage(t *testing.T) {
	bin := buildDtrace(t)
	child := exec.Command("true")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Wait() }()
	pid := child.Process.Pid
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && len(b) > i+2 && b[i+2] == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not become a zombie", pid)
		}
	}
	cmd := exec.Command(bin, "-p", strconv.Itoa(pid), "-n", "BEGIN { exit(0); }")
	cmd.Env = append(withoutTesting(os.Environ()), "_DTRACE_TESTING=t")
	stdout, stderr, status := testprog.Run(t, cmd)
	if status != 1 || stdout != "" || stderr != "dtrace: No such process\n" {
		t.Errorf("dtrace -p of zombie %d: status %d, stdout %q, stderr %q; want 1, \"\", \"dtrace: No such process\\n\"", pid, status, stdout, stderr)
	}
}

// TestCPUOption: -x cpu=N runs BEGIN, END, tick and the probes of a
// process bound to another CPU only on CPU N.
func TestCPUOption(t *testing.T) {
	cpus, err := kernel.OnlineCPUs()
	if err != nil || len(cpus) < 2 {
		t.Skip("needs two online CPUs")
	}
	bin := buildDtrace(t)
	for _, cpu := range cpus[:2] {
		out, err := dtraceCmd(bin, fmt.Sprintf("-xcpu=%d", cpu), "-qn",
			`BEGIN { printf("%d ", cpu); } tick-10ms { printf("%d ", cpu); } tick-10ms /++n == 5/ { exit(0); } END { printf("%d\n", cpu); }`).Output()
		if err != nil {
			t.Fatalf("-xcpu=%d: %v", cpu, err)
		}
		f := strings.Fields(string(out))
		if len(f) < 3 {
			t.Fatalf("-xcpu=%d printed %q", cpu, out)
		}
		for _, w := range f {
			if w != fmt.Sprint(cpu) {
				t.Errorf("-xcpu=%d: a probe fired on CPU %s (%q)", cpu, w, out)
			}
		}
	}
	cmd := dtraceCmd(bin, "-xcpu=4095", "-qn", "BEGIN { exit(0); }")
	if _, stderr, status := testprog.Run(t, cmd); status != 1 || !strings.Contains(stderr, "cpu 4095 is not online") {
		t.Errorf("-xcpu=4095: status %d, stderr %q", status, stderr)
	}
}

// TestSpecSize: the counts of speculation/tst.SpecSizeVariations. A
// clause whose record alone exceeds specsize ends at speculate(); one
// that overflows the speculation with the records before it runs, and its
// record is dropped.
func TestSpecSize(t *testing.T) {
	bin := buildDtrace(t)
	// 16 + 7 * 8 = 72 bytes, then 16 + 9 * 8 = 88.
	seven := strings.Repeat(`printf("%lld\n", x++); `, 7)
	nine := strings.Repeat(`printf("%lld\n", x++); `, 9)
	prog := `BEGIN { x = 1ll; self->n = 0; self->spec = speculation(); }
BEGIN { speculate(self->spec); ` + seven + `self->n++; }
BEGIN { speculate(self->spec); ` + nine + `self->n++; }
BEGIN { commit(self->spec); }
BEGIN { printf("counts: %d\n", self->n); exit(0); }`
	for _, tt := range []struct {
		size, lines int
		counts      string
		drops       string
	}{
		{71, 0, "counts: 0", "dtrace: 2 speculative drops\n"},
		{72, 7, "counts: 1", "dtrace: 1 speculative drop\n"},
		{159, 7, "counts: 2", "dtrace: 1 speculative drop\n"},
		{160, 16, "counts: 2", ""},
	} {
		cmd := dtraceCmd(bin, fmt.Sprintf("-xspecsize=%d", tt.size), "-qn", prog)
		stdout, stderr, status := testprog.Run(t, cmd)
		if status != 0 {
			t.Fatalf("specsize %d: status %d, stderr %q", tt.size, status, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != tt.lines+1 || lines[len(lines)-1] != tt.counts || stderr != tt.drops {
			t.Errorf("specsize %d: stdout %q, stderr %q; want %d lines, %q, %q", tt.size, stdout, stderr, tt.lines, tt.counts, tt.drops)
		}
	}
}

// TestLibDirs: -L reads every file of the directory in depends_on order;
// a cycle, a missing dependency and a file that does not compile are
// errors in dtrace-utils' words.
func TestLibDirs(t *testing.T) {
	bin := buildDtrace(t)
	lib := func(files map[string]string) string {
		dir := t.TempDir()
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dep := func(name string) string { return "#pragma D depends_on library " + name + "\n" }
	good := lib(map[string]string{
		"a.d": dep("b.d") + "inline int aa = bb + 1;\n",
		"b.d": "inline int bb = 41;\n",
	})
	out, err := dtraceCmd(bin, "-L", good, "-qn", `BEGIN { printf("%d\n", aa); exit(0); }`).Output()
	if err != nil || string(out) != "42\n\n" {
		t.Errorf("library chain: %q, %v", out, err)
	}
	for _, tt := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"a.d": dep("b.d"), "b.d": dep("a.d")}, "Cyclic dependency detected: %[1]s/b.d => %[1]s/a.d"},
		{map[string]string{"a.d": dep("nothere.d")}, "Invalid library dependency in %[1]s/a.d: %[1]s/nothere.d"},
		{map[string]string{"bad.d": "BEGIN {\n\tnonexistent_action();\n}\n"}, `"%[1]s/bad.d", line 2: undefined function name: nonexistent_action`},
	} {
		dir := lib(tt.files)
		cmd := dtraceCmd(bin, "-L", dir, "-e", "-n", "BEGIN {exit(0)}")
		want := "dtrace: invalid probe specifier BEGIN {exit(0)}: " + fmt.Sprintf(tt.want, dir) + "\n"
		if _, stderr, status := testprog.Run(t, cmd); status != 1 || stderr != want {
			t.Errorf("status %d, stderr %q, want 1, %q", status, stderr, want)
		}
	}
}

// TestProviderGlobPID: a provider field of a pattern and a pid chooses
// among that process's pid provider and its USDT providers (the corpus's
// pid/tst.provregex1 and 3), here with DTRACE_PROBE of the repository's
// <sys/sdt.h>.
func TestProviderGlobPID(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("needs gcc")
	}
	bin := buildDtrace(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "main.c")
	code := `#include <sys/sdt.h>
void go(int n) { DTRACE_PROBE(pyramid, entry, n, n * 2); }
int main(void) { go(21); return 0; }
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	include, _ := filepath.Abs("../../include")
	if out, err := exec.Command("gcc", "-O0", "-I", include, "-o", filepath.Join(dir, "main"), src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	out, err := dtraceCmd(bin, "-qn", `p*d$target::go:entry { printf("%s %s %s\n", probeprov, probefunc, probename); }`,
		"-c", filepath.Join(dir, "main")).Output()
	if err != nil {
		t.Fatal(err)
	}
	// pid<N>:main:go:entry and pyramid<N>:main:go:entry, in either order.
	var provs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] != "go" || f[2] != "entry" {
			t.Fatalf("output %q", out)
		}
		provs = append(provs, strings.TrimRight(f[0], "0123456789"))
	}
	sort.Strings(provs)
	if strings.Join(provs, " ") != "pid pyramid" {
		t.Errorf("providers %v, want pid and pyramid (output %q)", provs, out)
	}
}
