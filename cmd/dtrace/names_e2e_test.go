//go:build linux

package main

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// The tests of this file check what each frame of a user stack is called
// (docs/STACKS.md, "Names"): stripped programs named from their debug
// files, found locally or through a real debuginfod; JIT code from its
// perf map; and, on Debian's own binaries, no frame named beyond its
// function's end.

const profileUstack = `profile-997 /pid == $target/ { @[ustack()] = count(); }`

// aggStacks splits the text of one @[ustack()] aggregation into its
// stacks, each a list of frames, innermost first.
func aggStacks(out string) [][]string {
	var stacks [][]string
	var cur []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if _, err := strconv.ParseUint(l, 10, 64); err == nil && len(cur) > 0 {
			stacks = append(stacks, cur)
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	return stacks
}

// namesFrame is a frame of names.c that a symbol table named, a PLT
// stub it calls through (clock_gettime@plt: a sample lands there now and
// then), or one of the start-up and exit functions gcc's crt files add
// (a sample at exit lands in __do_global_dtors_aux now and then).
var namesFrame = regexp.MustCompile("^names`(main|a|b|c|d|over|_start|_init|_fini|__do_global_dtors_aux|frame_dummy|(de)?register_tm_clones|[a-z_]+@plt)(\\+0x[0-9a-f]+)?$")

// checkNamesStacks fails the test unless every frame in names is named
// (never names`0xADDR) and some stack starts in d; it returns the
// number of stacks that do.
func checkNamesStacks(t *testing.T, out, errs string) int {
	t.Helper()
	stacks := aggStacks(out)
	inD := 0
	for _, st := range stacks {
		for _, f := range st {
			if strings.HasPrefix(f, "names`") && !namesFrame.MatchString(f) {
				t.Errorf("frame %q is not named", f)
			}
		}
		if strings.HasPrefix(st[0], "names`d+") || st[0] == "names`d" {
			inD++
		}
	}
	if inD == 0 {
		t.Errorf("no stack in names`d:\n%s%s", out, errs)
	}
	return inD
}

// namesProgram builds names.c as distributions build C (-O2
// -fomit-frame-pointer, a build id), strips it, and returns it with its
// debug file and build id.
func namesProgram(t *testing.T) (prog, dbg, id string) {
	t.Helper()
	prog = testprog.BuildNames(t, "", "-O2", "-fomit-frame-pointer", "-Wl,--build-id")
	dbg = testprog.SplitDebug(t, prog, false)
	return prog, dbg, testprog.BuildID(t, prog)
}

// runDtrace runs dtrace with args and the environment env added, and
// returns its output, its standard error and how long it ran.
func runDtrace(t *testing.T, bin string, env []string, args ...string) (string, string, time.Duration) {
	t.Helper()
	cmd := dtraceCmd(bin, args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("dtrace %q: %v\n%s", args, err, errs.String())
	}
	return out.String(), errs.String(), time.Since(start)
}

// TestNamesBuildID: the stripped program, with its debug file where
// Debian's -dbgsym packages put them (/usr/lib/debug/.build-id/ab/
// cdef….debug), has every frame of its own named, from a profile and
// from a pid probe on d (which the stripped file's symbols do not name:
// the pid provider finds it in the debug file too).
func TestNamesBuildID(t *testing.T) {
	bin := buildDtrace(t)
	prog, dbg, id := namesProgram(t)
	testprog.InstallBuildID(t, "/usr/lib/debug", id, dbg)
	out, errs, _ := runDtrace(t, bin, nil, "-q", "-n", profileUstack, "-c", prog+" 1")
	checkNamesStacks(t, out, errs)
	out, errs, _ = runDtrace(t, bin, nil, "-q", "-n", `pid$target::d:entry { @[ustack()] = count(); }`, "-c", prog+" 0.2")
	stacks := aggStacks(out)
	if len(stacks) != 1 || len(stacks[0]) < 2 || stacks[0][0] != "names`d" || !strings.HasPrefix(stacks[0][1], "names`c+0x") {
		t.Errorf("pid$target::d:entry: want names`d then names`c+0x..:\n%s%s", out, errs)
	}
	checkNamesStacks(t, out, errs)
}

// debuginfodServer starts Debian's debuginfod on a free loopback port,
// indexing dir, and waits until it serves build id id. It returns the
// server's URL and a function that stops it.
func debuginfodServer(t *testing.T, dir, id string) (string, func()) {
	t.Helper()
	exe, err := exec.LookPath("debuginfod")
	if err != nil {
		t.Fatalf("debuginfod (the Debian package) is not installed: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, exe, "-F", dir, "-p", strconv.Itoa(port), "-d", filepath.Join(t.TempDir(), "db.sqlite"))
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	// The server only answers for what it has scanned. Ask it directly
	// (not through dtrace's client, whose cache would keep the 404).
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url + "/buildid/" + id + "/debuginfo")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("debuginfod did not serve %s within a minute:\n%s", id, log.String())
		}
	}
}

// TestNamesDebuginfod: the stripped program's debug file is not on the
// machine but served by a real debuginfod: every frame is named, and the
// file lands in the cache where elfutils' client keeps it; a second run
// with the server stopped names them from the cache, and says nothing.
func TestNamesDebuginfod(t *testing.T) {
	bin := buildDtrace(t)
	prog, dbg, id := namesProgram(t)
	served := t.TempDir()
	if err := os.Rename(dbg, filepath.Join(served, filepath.Base(dbg))); err != nil {
		t.Fatal(err)
	}
	url, stop := debuginfodServer(t, served, id)
	cache := filepath.Join(t.TempDir(), "cache")
	env := []string{"DEBUGINFOD_URLS=" + url, "DEBUGINFOD_CACHE_PATH=" + cache}
	out, errs, _ := runDtrace(t, bin, env, "-q", "-n", profileUstack, "-c", prog+" 1")
	checkNamesStacks(t, out, errs)
	if errs != "" {
		t.Errorf("stderr: %s", errs)
	}
	if fi, err := os.Stat(filepath.Join(cache, id, "debuginfo")); err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("cache entry %s/debuginfo: %v %v", id, fi, err)
	}
	stop()
	out, errs, _ = runDtrace(t, bin, env, "-q", "-n", `pid$target::d:entry { @[ustack()] = count(); }`, "-c", prog+" 0.2")
	stacks := aggStacks(out)
	if len(stacks) != 1 || stacks[0][0] != "names`d" {
		t.Errorf("from the cache, server stopped: want names`d:\n%s%s", out, errs)
	}
	checkNamesStacks(t, out, errs)
	if errs != "" {
		t.Errorf("stderr with the server stopped and the file cached: %s", errs)
	}
}

// TestNamesDebuginfodNoAnswer: a server that accepts connections and
// never answers costs one bounded wait (DEBUGINFOD_TIMEOUT=2) and one
// message; the frames it could have named are module`0xADDR, as
// dtrace(1M) prints an address it cannot name.
func TestNamesDebuginfodNoAnswer(t *testing.T) {
	bin := buildDtrace(t)
	prog, _, _ := namesProgram(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c) // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	url := "http://" + ln.Addr().String()
	env := []string{"DEBUGINFOD_URLS=" + url, "DEBUGINFOD_CACHE_PATH=" + filepath.Join(t.TempDir(), "cache"), "DEBUGINFOD_TIMEOUT=2"}
	out, errs, took := runDtrace(t, bin, env, "-q", "-n", profileUstack, "-c", prog+" 1")
	want := "dtrace: debuginfod server " + url + " did not answer within 2s"
	if n := strings.Count(errs, "\n"); n != 1 || !strings.HasPrefix(errs, want) {
		t.Errorf("stderr %q, want one line starting %q", errs, want)
	}
	// A bound, not a speed: the target runs 1 s, the server costs 2 s
	// once; a wait per object, or none at all, would show far beyond.
	if took > 30*time.Second {
		t.Errorf("dtrace ran %v", took)
	}
	unnamed := regexp.MustCompile("^names`0x[0-9a-f]+$")
	seen := false
	for _, st := range aggStacks(out) {
		seen = seen || unnamed.MatchString(st[0])
	}
	if !seen {
		t.Errorf("no names`0xADDR frame:\n%s", out)
	}
}

// TestNamesPerfMap: code a program generates at run time is named from
// the /tmp/perf-PID.map it writes, at an offset within the size the map
// gives (10 bytes).
func TestNamesPerfMap(t *testing.T) {
	bin := buildDtrace(t)
	prog := testprog.BuildJIT(t)
	out, errs, _ := runDtrace(t, bin, nil, "-q", "-n", profileUstack, "-c", prog+" 1")
	jit := regexp.MustCompile("^perf-([0-9]+)\\.map`jit_spin(\\+0x([0-9a-f]+))?$")
	n := 0
	for _, st := range aggStacks(out) {
		for i, f := range st {
			m := jit.FindStringSubmatch(f)
			if m == nil {
				if strings.HasPrefix(f, "perf-") {
					t.Errorf("frame %q", f)
				}
				continue
			}
			os.Remove("/tmp/perf-" + m[1] + ".map")
			if off, _ := strconv.ParseUint(m[3], 16, 64); off >= 10 {
				t.Errorf("frame %q beyond jit_spin's 10 bytes", f)
			}
			if i == 0 {
				n++
			}
		}
	}
	if n == 0 {
		t.Errorf("no stack in jit_spin:\n%s%s", out, errs)
	}
}

// elfFuncs are the function symbols of an ELF file and of its debug
// file, by name, with the sections they lie in.
type elfFuncs struct {
	byName map[string][]elf.Symbol
	starts []uint64 // every function's start, sorted
	secs   []*elf.Section
}

// readFuncs reads the function symbols of path and its debug file, with
// debug/elf, apart from the symbol package that dtrace names them with.
func readFuncs(t *testing.T, path string) *elfFuncs {
	t.Helper()
	out := &elfFuncs{byName: map[string][]elf.Symbol{}}
	for i, p := range []string{path, symbol.DebugFile(path)} {
		if p == "" {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			out.secs = f.Sections
		}
		syms, _ := f.Symbols()
		dyn, _ := f.DynamicSymbols()
		for _, s := range append(syms, dyn...) {
			// An IFUNC symbol names its resolver (strnlen's runs when
			// lazy binding resolves a call to it: a sample lands there
			// now and then).
			if typ := elf.ST_TYPE(s.Info); (typ == elf.STT_FUNC || typ == elf.STT_GNU_IFUNC) && s.Section != elf.SHN_UNDEF && s.Value != 0 {
				out.byName[s.Name] = append(out.byName[s.Name], s)
				out.starts = append(out.starts, s.Value)
			}
		}
		f.Close()
	}
	slices.Sort(out.starts)
	return out
}

// inside reports whether name+off lies inside a function called name:
// within its size, or, for a function of no size, within its section and
// before the next function.
func (e *elfFuncs) inside(name string, off uint64) bool {
	for _, s := range e.byName[name] {
		if s.Size > 0 {
			if off < s.Size {
				return true
			}
			continue
		}
		addr := s.Value + off
		i, _ := slices.BinarySearch(e.starts, s.Value+1)
		if i < len(e.starts) && e.starts[i] <= addr {
			continue
		}
		for _, sec := range e.secs {
			if sec.Addr <= s.Value && s.Value < sec.Addr+sec.Size && addr < sec.Addr+sec.Size {
				return true
			}
		}
	}
	return false
}

// libraries maps the base names of what ldd lists for exe to paths.
func libraries(t *testing.T, exe string) map[string]string {
	t.Helper()
	out, err := exec.Command("ldd", exe).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", exe, err)
	}
	paths := map[string]string{filepath.Base(exe): exe}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/") {
			paths[filepath.Base(f[2])] = f[2]
		} else if len(f) >= 1 && strings.HasPrefix(f[0], "/") {
			paths[filepath.Base(f[0])] = f[0]
		}
	}
	return paths
}

var symOff = regexp.MustCompile("^([^`]+)`([^`+]+)(\\+0x([0-9a-f]+))?$")

// TestNamesWithinSize: on Debian's python3 running a pure-Python loop
// and gzip -1 compressing 64 MB, no frame is named sym+off with off
// beyond the function's end (checked with debug/elf against the object's
// symbol tables and its debug file). libpython's _fini+0x125b70 was one.
func TestNamesWithinSize(t *testing.T) {
	bin := buildDtrace(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<20; i++ {
		fmt.Fprintf(&b, "%d %x %d\n", i, i*2654435761, i%977)
	}
	if err := os.WriteFile(data, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop.py")
	if err := os.WriteFile(loop, []byte("import time\nt = time.time()\nwhile time.time() - t < 2:\n    s = 0\n    for i in range(10000):\n        s += i * i\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ exe, args string }{
		{"/usr/bin/python3.11", loop},
		{"/usr/bin/gzip", "-1 -k -f " + data},
	} {
		t.Run(filepath.Base(tc.exe), func(t *testing.T) {
			if _, err := os.Stat(tc.exe); err != nil {
				t.Fatalf("Debian's %s: %v", tc.exe, err)
			}
			paths := libraries(t, tc.exe)
			out, errs, _ := runDtrace(t, bin, nil, "-q", "-n", profileUstack, "-c", tc.exe+" "+tc.args)
			funcs := map[string]*elfFuncs{}
			named, checked := 0, 0
			for _, st := range aggStacks(out) {
				for _, f := range st {
					m := symOff.FindStringSubmatch(f)
					if m == nil || strings.HasPrefix(m[2], "0x") {
						continue
					}
					named++
					path := paths[m[1]]
					if path == "" {
						continue
					}
					if funcs[path] == nil {
						funcs[path] = readFuncs(t, path)
					}
					off, _ := strconv.ParseUint(m[4], 16, 64)
					if strings.HasSuffix(m[2], "@plt") {
						// A PLT stub, named for the function it jumps
						// to: no symbol table has it; its entry is 16
						// bytes.
						if off >= 16 {
							t.Errorf("frame %s lies beyond a PLT entry", f)
						}
					} else if !funcs[path].inside(m[2], off) {
						t.Errorf("frame %s lies beyond %s's end", f, m[2])
					}
					checked++
				}
			}
			if checked == 0 {
				t.Errorf("no named frame to check:\n%s%s", out, errs)
			}
			t.Logf("%d named frames, %d checked against %d objects", named, checked, len(funcs))
		})
	}
}
