//go:build linux

package kvartest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// kallsymsHas reports whether this machine's kallsyms lists name.
func kallsymsHas(name string) bool {
	b, err := os.ReadFile("/proc/kallsyms")
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte(" "+name+"\n"))
}

// TestHostTypedReads reads a symbol every kernel with BTF lists, the
// start of its BTF (magic 0xeb9f, version 1, flags 0, header length 24),
// at the widths extern declarations give it: each read must take exactly
// the declared bytes.
func TestHostTypedReads(t *testing.T) {
	testprog.NeedRoot(t, "BPF")
	if !kallsymsHas("__start_BTF") {
		t.Skip("kallsyms lists no __start_BTF")
	}
	bin := testprog.BuildCmd(t, t.TempDir(), "dtrace")
	tests := []struct{ decl, expr, want string }{
		{"extern unsigned short __start_BTF;", "`__start_BTF", "eb9f"},
		{"extern unsigned int __start_BTF;", "`__start_BTF", "1eb9f"},
		{"extern unsigned long __start_BTF;", "`__start_BTF", "180001eb9f"},
		{"extern unsigned char __start_BTF;", "__start_BTF", "9f"},
		{"extern const unsigned char __start_BTF[];", "`__start_BTF[1]", "eb"},
	}
	for _, tt := range tests {
		prog := tt.decl + ` BEGIN { printf("%x\n", ` + tt.expr + `); exit(0); }`
		out, status := testprog.Output(t, bin, "-qn", prog)
		if status != 0 || strings.TrimSpace(out) != tt.want {
			t.Errorf("%s: %q, status %d; want %s", prog, out, status, tt.want)
		}
	}
	// A char array of unknown length is a string at its address.
	for _, expr := range []string{"stringof(`__start_BTF)", "`__start_BTF"} {
		prog := `extern const char __start_BTF[]; BEGIN { printf("%s|", ` + expr + `); exit(0); }`
		out, status := testprog.Output(t, bin, "-qn", prog)
		if status != 0 || !strings.HasPrefix(out, "\x9f\xeb\x01|") {
			t.Errorf("%s: %q, status %d; want \"\\x9f\\xeb\\x01|\"", prog, out, status)
		}
	}
	// Without a type, a data symbol's value cannot be read.
	prog := "BEGIN { trace(`__start_BTF); exit(0); }"
	out, status := testprog.Output(t, bin, "-xerrtags", "-qn", prog)
	if status == 0 || !strings.Contains(out, "[D_SYM_NOTYPES] no symbolic type information is available for vmlinux`__start_BTF: No type information available for symbol") {
		t.Errorf("%s: %q, status %d; want D_SYM_NOTYPES", prog, out, status)
	}
}

// guestScript runs in the guest: each line of its output is key=value.
// The D programs read the kernel variables the issue names, with their
// types from the D library (kvars.d) or the program's extern.
const guestScript = `
D=$1
echo possible=$(cat /sys/devices/system/cpu/possible)
echo memtotal=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
echo redirect_max=$(cat /sys/module/overlay/parameters/redirect_max 2>/dev/null)
$D -qn 'BEGIN { printf("nr_cpu_ids=%d\nsize=%d\nmax_pfn=%d\n", ` + "`nr_cpu_ids, sizeof(`nr_cpu_ids), `max_pfn" + `); exit(0); }' 2>&1
$D -qn 'BEGIN { j = ` + "`jiffies" + `; } tick-100ms { printf("jiffies=%d %d\n", j, ` + "vmlinux`jiffies" + `); exit(0); }' 2>&1
$D -qn 'BEGIN { printf("%s", stringof(` + "`linux_banner" + `)); exit(0); }' > banner.out 2>&1
cmp -s banner.out /proc/version; echo banner_cmp=$?
head -c $(wc -c < /proc/version) banner.out | cmp -s - /proc/version; echo banner_prefix=$?
rm -f banner.out
$D -qn 'extern unsigned short ovl_redirect_max; BEGIN { printf("ovl_redirect_max=%d\n", ` + "overlay`ovl_redirect_max" + `); exit(0); }' 2>&1
echo "exit_x=$($D -xerrtags -qn 'BEGIN { exit(x); }' 2>&1)"
`

// guestDir skips the test without run-kernel and returns a directory
// for binaries the guest can run.
func guestDir(t *testing.T) string {
	t.Helper()
	guesttest.RunKernel(t)
	return guesttest.Dir(t, ".guest-")
}

// runGuest runs a shell command in a 6.12 guest with two CPUs and returns
// its output.
func runGuest(t *testing.T, command string) ([]byte, error) {
	t.Helper()
	return guesttest.Run(t, "-c", "2", "-t", "1800", command)
}

// TestGuestKernelVariables boots Debian's 6.12 kernel (two CPUs) and
// checks that kernel variables read right there: `nr_cpu_ids is the
// number of possible CPUs, stringof(`linux_banner) is /proc/version,
// `max_pfn covers the memory, `jiffies advances, a module's variable
// (overlay`ovl_redirect_max, a static ushort) has the value its
// parameter shows, and the kernel's static x does not answer to a bare x.
func TestGuestKernelVariables(t *testing.T) {
	dir := guestDir(t)
	bin := testprog.BuildCmd(t, dir, "dtrace")
	script := guesttest.Script(t, dir, "guest.sh", guestScript)
	out, err := runGuest(t, "cd "+dir+" && sh "+script+" "+bin)
	if err != nil {
		t.Fatalf("run-kernel: %v\n%s", err, out)
	}
	got := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			got[k] = v
		}
	}
	t.Logf("guest output:\n%s", out)

	possible := 0
	for _, r := range strings.Split(got["possible"], ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("possible CPUs %q", got["possible"])
		}
		possible += b - a + 1
	}
	if possible < 2 {
		t.Errorf("guest has %d possible CPUs, want 2 (run-kernel -c 2)", possible)
	}
	if got["nr_cpu_ids"] != strconv.Itoa(possible) || got["size"] != "4" {
		t.Errorf("`nr_cpu_ids = %q (size %q), want %d (size 4)", got["nr_cpu_ids"], got["size"], possible)
	}
	pfn, err := strconv.ParseUint(got["max_pfn"], 10, 64)
	mem, err2 := strconv.ParseUint(got["memtotal"], 10, 64)
	// MemTotal (kB) is the memory less the kernel's reservations; the
	// page frames (4 kB) span all of it and the holes below 4 GB.
	if err != nil || err2 != nil || pfn*4 < mem || pfn*4 > 2*mem+4<<20 {
		t.Errorf("`max_pfn = %q for MemTotal %q kB", got["max_pfn"], got["memtotal"])
	}
	j := strings.Fields(got["jiffies"])
	if len(j) != 2 {
		t.Errorf("jiffies: %q", got["jiffies"])
	} else if a, err1 := strconv.ParseUint(j[0], 10, 64); err1 != nil {
		t.Errorf("jiffies: %q", got["jiffies"])
	} else if b, err2 := strconv.ParseUint(j[1], 10, 64); err2 != nil || b <= a {
		t.Errorf("`jiffies did not advance over 100ms: %q", got["jiffies"])
	}
	// dtrace ends its output with a newline of its own.
	if got["banner_prefix"] != "0" || got["banner_cmp"] != "1" {
		t.Errorf("stringof(`linux_banner) is not /proc/version (cmp %s, prefix %s)", got["banner_cmp"], got["banner_prefix"])
	}
	if got["redirect_max"] == "" {
		t.Log("no overlay module in the guest: module variable not checked")
	} else if got["ovl_redirect_max"] != got["redirect_max"] {
		t.Errorf("overlay`ovl_redirect_max = %q, want %q", got["ovl_redirect_max"], got["redirect_max"])
	}
	if !strings.Contains(got["exit_x"], "[D_IDENT_UNDEF] failed to resolve x: Unknown variable name") {
		t.Errorf("exit(x): %q, want D_IDENT_UNDEF", got["exit_x"])
	}
}

// guestCorpusPassing is how many of testdata/guest-corpus.txt pass in the
// 6.12 guest; testdata/guest-xfail.txt lists the others.
const guestCorpusPassing = 60

// TestGuestCorpus runs in the 6.12 guest the corpus tests that read
// kernel variables and those of undefined identifiers (which 6.12's
// static variables must not capture): all but the expected failures of
// testdata/guest-xfail.txt must pass.
func TestGuestCorpus(t *testing.T) {
	dir := guestDir(t)
	dtrace := testprog.BuildCmd(t, dir, "dtrace")
	dtconform := testprog.BuildCmd(t, dir, "dtconform")
	list, err := os.ReadFile("testdata/guest-corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range strings.Split(string(list), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			names = append(names, regexp.QuoteMeta(l))
		}
	}
	// One emulated CPU runs the guest: one test at a time, with time to
	// spare. dir is in this package's directory, beside testdata.
	cmd := fmt.Sprintf("cd %s && %s -dtrace %s -xfail ../testdata/guest-xfail.txt -j 1 -timeout 60s -v -run '^(%s)$'",
		dir, dtconform, dtrace, strings.Join(names, "|"))
	out, err := runGuest(t, cmd)
	t.Logf("guest output:\n%s", out)
	if err != nil {
		t.Errorf("dtconform in the guest: %v", err)
	}
	if n := guesttest.Passed(t, out); n < guestCorpusPassing {
		t.Errorf("%d of %d tests passed in the guest, want at least %d", n, len(names), guestCorpusPassing)
	}
}
