package fbt_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/guesttest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider/fbt"
)

// The fbt tests need a kernel with kprobes and fentry, which the machines
// we build on do not run: TestGuest boots Debian's 6.12 with
// ../shared/vm/run-kernel and runs this test binary inside it, where
// FBT_GUEST=1 selects the in-guest tests (TestInGuest). It skips only
// when run-kernel or its kernel package is missing.

const guestEnv = "FBT_GUEST"

func TestGuest(t *testing.T) {
	// The guest sees the current directory read-write, /tmp empty: put
	// the binaries here.
	dir := guesttest.Host(t, guestEnv, ".fbt-guest-")
	env := []string{guestEnv + "=1", "FBT_DTRACE=" + testprog.BuildCmd(t, dir, "dtrace")}
	if !testing.Short() {
		env = append(env, "FBT_DTCONFORM="+testprog.BuildCmd(t, dir, "dtconform"))
	}
	guesttest.RunTest(t, dir, env, "TestInGuest", "-t", "2100", "-m", "2048")
}

// dtrace runs the dtrace under test with args, returning stdout.
func dtrace(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Getenv("FBT_DTRACE"), args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("dtrace %q: %v", args, time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("dtrace %q: %v\n%s%s", args, err, out, stderr.Bytes())
	}
	return string(out)
}

var countRE = regexp.MustCompile(`(?m)^(\w+) (\d+)$`)

// counts parses "key N" lines.
func counts(s string) map[string]int {
	m := map[string]int{}
	for _, sm := range countRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(sm[2])
		m[sm[1]] = n
	}
	return m
}

func TestInGuest(t *testing.T) {
	if os.Getenv(guestEnv) == "" {
		t.Skip("runs in the 6.12 guest (TestGuest)")
	}
	t.Run("list", func(t *testing.T) {
		out := dtrace(t, nil, "-l", "-P", "fbt")
		n := strings.Count(out, "\n") - 1
		t.Logf("%d fbt probes", n)
		if n < 40000 {
			t.Errorf("dtrace -l -P fbt lists %d probes, want at least 40,000", n)
		}
		for _, want := range []string{" fbt           vmlinux                          vfs_read entry\n", "vfs_read return\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("listing lacks %q", want)
			}
		}
		v := dtrace(t, nil, "-l", "-v", "-n", "fbt::vfs_read:entry")
		if !strings.Contains(v, "args[0]: struct file *") || !strings.Contains(v, "args[3]: loff_t *") {
			t.Errorf("-lv of vfs_read:entry lacks its argument types:\n%s", v)
		}
	})
	data := filepath.Join(os.TempDir(), "fbt-data.txt")
	if err := os.WriteFile(data, bytes.Repeat([]byte("0123456789abcdef"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	// dd reads the 64 KiB file in one read(2) and an EOF read, and writes
	// nothing where dtrace's output goes.
	reader := "dd if=" + data + " of=/dev/null bs=65536 status=none"
	for _, mode := range []string{"fentry", "kprobe"} {
		var env []string
		if mode == "kprobe" {
			env = []string{"DTRACE_FBT=kprobe"}
		}
		t.Run("count-"+mode, func(t *testing.T) {
			// Every read(2) of dd calls vfs_read; its start-up may
			// read more through it (the dynamic loader).
			out := dtrace(t, env, "-q", "-n", `fbt::vfs_read:entry /pid == $target/ { @f = count(); }
				syscall::read:entry /pid == $target/ { @s = count(); }
				END { printa("fbt %@d\n", @f); printa("sys %@d\n", @s); }`, "-c", reader)
			c := counts(out)
			if c["sys"] < 2 || c["fbt"] < c["sys"] {
				t.Errorf("vfs_read counted %d, read(2) %d: want at least as many vfs_reads as (at least 2) reads\n%s", c["fbt"], c["sys"], out)
			}
		})
		t.Run("quantize-"+mode, func(t *testing.T) {
			out := dtrace(t, env, "-q", "-n", `fbt::vfs_read:return /pid == $target/ { @ = quantize(arg1); }`, "-c", reader)
			// The 64 KiB file is read at once (a row at 65536 with a
			// count), then the EOF read's 0.
			if !strings.Contains(out, "value  ------------- Distribution ------------- count") ||
				!regexp.MustCompile(`(?m)^ +0 \|@+ +[1-9]`).MatchString(out) ||
				!regexp.MustCompile(`(?m)^ +65536 \|@+ +[1-9]`).MatchString(out) {
				t.Errorf("no distribution of vfs_read's return values:\n%s", out)
			}
		})
		t.Run("args-"+mode, func(t *testing.T) {
			out := dtrace(t, env, "-q", "-n", `fbt::vfs_read:entry /pid == $target/ { printf("file %s\n", stringof(args[0]->f_path.dentry->d_name.name)); }
				fbt::vfs_read:return /pid == $target/ { printf("ret %d %d\n", arg0, arg1); }`, "-c", reader)
			if !strings.Contains(out, "file fbt-data.txt\n") {
				t.Errorf("args[0]->f_path does not name the file read:\n%s", out)
			}
			if !strings.Contains(out, "ret -1 0\n") {
				t.Errorf("no return with arg0 -1 and arg1 0 (EOF):\n%s", out)
			}
		})
	}
	for _, mode := range []string{"multi", "fentry", "kprobe"} {
		t.Run("wide-"+mode, func(t *testing.T) {
			// vfs_* is more than fbt.WideThreshold probes: programs
			// shared by prologue, one kprobe.multi link each by
			// default, one kprobe per function with cookies as on
			// 6.1 (kprobe).
			var env []string
			if mode != "multi" {
				env = []string{"DTRACE_FBT=" + mode}
			}
			out := dtrace(t, env, "-q", "-n", `fbt::vfs_*:entry /pid == $target/ { @e[probefunc] = count(); }
				fbt::vfs_*:return /pid == $target/ { @r[probefunc] = count(); }
				END { printa("e%s %@d\n", @e); printa("r%s %@d\n", @r); }`, "-c", reader)
			c := counts(out)
			if c["evfs_read"] < 2 || c["rvfs_read"] != c["evfs_read"] {
				t.Errorf("vfs_read entries %d, returns %d: want equal and at least 2\n%s", c["evfs_read"], c["rvfs_read"], out)
			}
		})
	}
	t.Run("wide-every-copy", func(t *testing.T) {
		// A wide description attaches to every function it names:
		// those of loadable modules (9pnet, which the guest's root
		// file system runs on) and every copy of a static function
		// whose name several share (ZSTD_safecopyLiterals has five
		// in 6.12). The kernel's list of enabled functions, read while
		// dtrace traces, must hold each function the function tracer
		// lists for the descriptions exactly once.
		want := tracedNames(t, "available_filter_functions", func(name, mod string) bool {
			return mod == "9pnet" || mod == "" && strings.HasPrefix(name, "ZSTD_")
		})
		if len(want) < 2 {
			t.Fatalf("the kernel lists %d functions of 9pnet and ZSTD_*", len(want))
		}
		got := enabledWhileTracing(t, nil, `fbt:9pnet::entry, fbt:vmlinux:ZSTD_*:entry`, func(name, mod string) bool {
			return mod == "9pnet" || mod == "" && strings.HasPrefix(name, "ZSTD_")
		})
		for name, n := range want {
			if got[name] != n {
				t.Errorf("%s: %d enabled, want %d (every copy, once)", name, got[name], n)
			}
		}
		for name, n := range got {
			if want[name] == 0 {
				t.Errorf("%s: %d enabled, not a function of the descriptions", name, n)
			}
		}
	})
	t.Run("shared-names-kprobe", func(t *testing.T) {
		// A wide description on kprobes (DTRACE_FBT=kprobe; 6.1 has
		// no kprobe.multi) whose functions include a name several
		// static functions share: the kernel refuses such a name
		// (EADDRNOTAVAIL), so each copy is probed at its address, once.
		all := tracedNames(t, "available_filter_functions", func(name, mod string) bool { return mod == "" })
		glob := sharedGlob(all)
		if glob == "" {
			t.Skip("the kernel lists no vmlinux function name twice")
		}
		keep := func(name, mod string) bool {
			return mod == "" && strings.HasPrefix(name, strings.TrimSuffix(glob, "*"))
		}
		want := tracedNames(t, "available_filter_functions", keep)
		got := enabledWhileTracing(t, []string{"DTRACE_FBT=kprobe"}, "fbt:vmlinux:"+glob+":entry", keep)
		for name, n := range want {
			if got[name] != n {
				t.Errorf("%s (%s): %d enabled, want %d (every copy, once)", name, glob, got[name], n)
			}
		}
	})
	t.Run("interrupt-attaching", func(t *testing.T) {
		// Every function on kprobes, one at a time, as on 6.1 (no
		// kprobe.multi), where that takes hours: a SIGINT once a few
		// hundred are attached ends dtrace without attaching the rest,
		// and leaves nothing enabled.
		interruptAttaching(t, []string{"DTRACE_FBT=kprobe"}, "fbt:::entry", 200)
	})
	t.Run("flowindent", func(t *testing.T) {
		out := dtrace(t, nil, "-F", "-n", `fbt::vfs_read:entry,fbt::vfs_read:return,fbt::rw_verify_area:entry,fbt::rw_verify_area:return /pid == $target/ {}`, "-c", reader)
		for _, want := range []string{"  -> vfs_read", "    -> rw_verify_area", "    <- rw_verify_area", "  <- vfs_read"} {
			if !strings.Contains(out, want) {
				t.Errorf("-F output lacks %q:\n%s", want, out)
			}
		}
	})
	// lockstat is built on fbt's functions; its tests share this boot.
	t.Run("lockstat-list", func(t *testing.T) {
		out := dtrace(t, nil, "-l", "-P", "lockstat")
		for _, name := range []string{"adaptive-acquire", "adaptive-block", "adaptive-release", "adaptive-spin",
			"rw-acquire", "rw-block", "rw-release", "rw-spin", "spin-acquire", "spin-release", "spin-spin"} {
			if !regexp.MustCompile(`(?m)^ *\d+ +lockstat +vmlinux +` + name + `$`).MatchString(out) {
				t.Errorf("dtrace -l -P lockstat lacks %s:\n%s", name, out)
			}
		}
	})
	t.Run("lockstat-count", func(t *testing.T) {
		// dd's reads take and release spin locks (the page cache's).
		out := dtrace(t, nil, "-q", "-n", `lockstat:::spin-acquire /pid == $target/ { @a = count(); }
			lockstat:::spin-release /pid == $target/ { @r = count(); }
			lockstat:::adaptive-acquire /pid == $target/ { @m = count(); }
			END { printa("acquire %@d\n", @a); printa("release %@d\n", @r); printa("mutex %@d\n", @m); }`, "-c", reader)
		c := counts(out)
		if c["acquire"] == 0 || c["release"] == 0 {
			t.Errorf("spin-acquire counted %d, spin-release %d: want both > 0\n%s", c["acquire"], c["release"], out)
		}
		t.Logf("%v", c)
	})
	t.Run("lockstat-block", func(t *testing.T) {
		// Compiles, attaches and runs; blocking on a mutex may not
		// happen in a second of an idle guest.
		dtrace(t, nil, "-q", "-n", `lockstat:::adaptive-block { @[stack()] = count(); } lockstat:::adaptive-block { @t = quantize(arg1); } tick-1s { exit(0); }`)
	})
	t.Run("corpus", func(t *testing.T) {
		if n := conform(t, "-run", "fbtprovider/", "-timeout", "60s"); n < 14 {
			t.Errorf("fbtprovider: %d passed, want at least 14 of 16", n)
		}
	})
	// dtrace-utils' lockstat shell tests (-lv listings of each probe,
	// with its argument types) need fbt's kernel: all 11 pass here.
	t.Run("lockstat-shell", func(t *testing.T) {
		if n := conform(t, "-only", "sh", "-run", "lockstat/"); n != 11 {
			t.Errorf("lockstat shell tests: %d passed, want 11", n)
		}
	})
}

// conform runs dtconform (FBT_DTCONFORM) on the dtrace under test, one
// test at a time, with args, and returns how many tests passed; it skips
// under -short or without dtconform.
func conform(t *testing.T, args ...string) int {
	t.Helper()
	if testing.Short() {
		t.Skip("-short")
	}
	bin := os.Getenv("FBT_DTCONFORM")
	if bin == "" {
		t.Skip("FBT_DTCONFORM not set")
	}
	cmd := exec.Command(bin, append([]string{"-dtrace", os.Getenv("FBT_DTRACE"), "-j", "1", "-v"}, args...)...)
	cmd.Dir = "../.."
	out, _ := cmd.CombinedOutput()
	t.Logf("%s", out)
	return guesttest.Passed(t, out)
}

// tracedNames counts the functions a tracefs list of functions
// (available_filter_functions, enabled_functions) holds that keep says
// to keep, by name; mod is "" for vmlinux.
func tracedNames(t *testing.T, file string, keep func(name, mod string) bool) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/sys/kernel/tracing", file))
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range strings.Split(string(data), "\n") {
		// "name [module]", followed in enabled_functions by the
		// count of users and their trampolines.
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "__ftrace_invalid_address__") {
			continue
		}
		mod := ""
		if len(f) > 1 && strings.HasPrefix(f[1], "[") && strings.HasSuffix(f[1], "]") {
			mod = f[1][1 : len(f[1])-1]
		}
		if keep(f[0], mod) {
			n[f[0]]++
		}
	}
	return n
}

// enabledWhileTracing runs `descs { @[probefunc] = count(); }` with env
// until BEGIN has fired, and returns the functions keep selects from the
// kernel's enabled_functions while it traces; none may be left enabled
// after it exits.
func enabledWhileTracing(t *testing.T, env []string, descs string, keep func(name, mod string) bool) map[string]int {
	t.Helper()
	cmd := exec.Command(os.Getenv("FBT_DTRACE"), "-q", "-n", descs+` { @[probefunc] = count(); }
		BEGIN { printf("ready\n"); }`)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("dtrace -n '%s' printed %q (%v), not ready:\n%s", descs, line, err, stderr.Bytes())
	}
	got := tracedNames(t, "enabled_functions", keep)
	cmd.Process.Signal(os.Interrupt)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Errorf("dtrace: %v\n%s", err, stderr.Bytes())
	}
	if left := tracedNames(t, "enabled_functions", func(string, string) bool { return true }); len(left) != 0 {
		t.Errorf("%d functions still enabled after dtrace exited", len(left))
	}
	return got
}

// interruptAttaching starts `descs { @[probefunc] = count(); }` with env,
// sends SIGINT once the kernel has at least n functions enabled, and
// wants dtrace gone within a minute plus twice the time it took to
// attach them (it detaches them), with "interrupted" and nothing enabled.
func interruptAttaching(t *testing.T, env []string, descs string, n int) {
	t.Helper()
	cmd := exec.Command(os.Getenv("FBT_DTRACE"), "-q", "-n", descs+` { @[probefunc] = count(); }`)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer cmd.Process.Kill()
	enabled := func() int {
		return len(tracedNames(t, "enabled_functions", func(string, string) bool { return true }))
	}
	for enabled() < n {
		select {
		case err := <-done:
			t.Fatalf("dtrace exited (%v) before %d functions were enabled:\n%s", err, n, stderr.Bytes())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Since(start) > 10*time.Minute {
			t.Fatalf("fewer than %d functions enabled after 10 minutes", n)
		}
	}
	attaching := time.Since(start)
	at := time.Now()
	cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-done:
		t.Logf("SIGINT after %v with %d+ functions enabled; dtrace exited %v later: %v", attaching.Round(time.Millisecond), n, time.Since(at).Round(time.Millisecond), err)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("exit: %v, want status 1", err)
		}
	case <-time.After(time.Minute + 2*attaching):
		t.Fatalf("dtrace still running %v after SIGINT (attaching every probe before it looks at the signal?)", time.Since(at).Round(time.Second))
	}
	if !strings.Contains(stderr.String(), "could not enable tracing: interrupted") {
		t.Errorf("stderr lacks \"could not enable tracing: interrupted\":\n%s", stderr.Bytes())
	}
	if left := enabled(); left != 0 {
		t.Errorf("%d functions still enabled after dtrace exited", left)
	}
}

// sharedGlob returns a glob of vmlinux function names ("prefix*") that
// matches more than WideThreshold and at most 200 of names, one of them
// a name several functions share (count above 1); "" where none does.
func sharedGlob(names map[string]int) string {
	var shared []string
	for name, n := range names {
		if n > 1 {
			shared = append(shared, name)
		}
	}
	slices.Sort(shared)
	for _, s := range shared {
		for l := len(s); l >= 3; l-- {
			m := 0
			for name := range names {
				if strings.HasPrefix(name, s[:l]) {
					m++
				}
			}
			if m > 200 {
				break
			}
			if m > fbt.WideThreshold {
				return s[:l] + "*"
			}
		}
	}
	return ""
}
