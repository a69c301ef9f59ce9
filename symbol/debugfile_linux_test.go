//go:build linux

package symbol_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// namesFuncs are the functions of names.c every stack sampled in d has.
var namesFuncs = []string{"main", "a", "b", "c", "d"}

// checkNamed fails the test unless obj names each of names.c's functions
// at an address inside it, from the source want, and d's first
// instruction has a line of names.c when lines is set.
func checkNamed(t *testing.T, obj *symbol.Object, want string, lines bool) {
	t.Helper()
	if obj.SymbolSource != want {
		t.Errorf("symbols from %q, want %q", obj.SymbolSource, want)
	}
	for _, name := range namesFuncs {
		v, ok := obj.SymbolValue(name)
		if !ok {
			t.Errorf("%s is not named", name)
			continue
		}
		if f, ok := obj.Lookup(v + 1); !ok || f.Name != name {
			t.Errorf("Lookup(%s+1) = %q, %v", name, f.Name, ok)
		}
		if name == "d" && lines {
			if file, line, ok := obj.Line(v); !ok || filepath.Base(file) != "names.c" || line == 0 {
				t.Errorf("line of d: %q:%d %v", file, line, ok)
			}
		}
	}
}

// TestDebugFileBuildID: a stripped executable whose debug file sits
// under DebugDir/.build-id is named from it, lines included; the same
// file with another build id (left from an older build) is not used.
func TestDebugFileBuildID(t *testing.T) {
	prog := testprog.BuildNames(t, "", "-O2", "-fomit-frame-pointer", "-Wl,--build-id")
	dbg := testprog.SplitDebug(t, prog, false)
	id := testprog.BuildID(t, prog)
	dir := t.TempDir()
	defer func(old string) { symbol.DebugDir = old }(symbol.DebugDir)
	symbol.DebugDir = dir
	obj, err := symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	if obj.SymbolSource != ".dynsym" && obj.SymbolSource != "" {
		t.Fatalf("without a debug file, symbols from %q", obj.SymbolSource)
	}
	if _, ok := obj.SymbolValue("d"); ok {
		t.Fatal("a stripped executable names d")
	}
	p := testprog.InstallBuildID(t, dir, id, dbg)
	if got := symbol.DebugFile(prog); got != p {
		t.Errorf("DebugFile = %q, want %q", got, p)
	}
	obj, err = symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	checkNamed(t, obj, p, true)
	if obj.BuildID != id {
		t.Errorf("BuildID %q, want %q", obj.BuildID, id)
	}
	// Another build's debug file under this id.
	other := testprog.BuildNames(t, "", "-O1", "-Wl,--build-id")
	otherDbg := testprog.SplitDebug(t, other, false)
	testprog.InstallBuildID(t, dir, id, otherDbg)
	if got := symbol.DebugFile(prog); got != "" {
		t.Errorf("a debug file of another build is used: %q", got)
	}
}

// TestDebugFileLink: without a build id, the .gnu_debuglink name is
// found beside the object, in its .debug directory and under DebugDir
// followed by the object's directory, in that order; a file whose CRC is
// not the link's is not used.
func TestDebugFileLink(t *testing.T) {
	dir := t.TempDir()
	prog := testprog.BuildNames(t, dir, "-O2", "-fomit-frame-pointer", "-Wl,--build-id=none")
	dbg := testprog.SplitDebug(t, prog, true)
	b, err := os.ReadFile(dbg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dbg); err != nil {
		t.Fatal(err)
	}
	global := t.TempDir()
	defer func(old string) { symbol.DebugDir = old }(symbol.DebugDir)
	symbol.DebugDir = global
	name := filepath.Base(dbg)
	places := []string{dbg, filepath.Join(dir, ".debug", name), filepath.Join(global, dir, name)}
	for i := len(places) - 1; i >= 0; i-- {
		// Each place, with those after it also holding a copy: the first
		// in gdb's order wins.
		if err := os.MkdirAll(filepath.Dir(places[i]), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(places[i], b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := symbol.DebugFile(prog); got != places[i] {
			t.Errorf("DebugFile = %q, want %q", got, places[i])
		}
	}
	obj, err := symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	checkNamed(t, obj, dbg, true)
	for _, p := range places {
		if err := os.WriteFile(p, append(b, 0), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := symbol.DebugFile(prog); got != "" {
		t.Errorf("a debug file with another CRC is used: %q", got)
	}
}

// TestMiniDebugInfo: a stripped executable with no debug file but a
// .gnu_debugdata section made as Fedora makes it is named from that.
func TestMiniDebugInfo(t *testing.T) {
	prog := testprog.BuildNames(t, "", "-O2", "-fomit-frame-pointer", "-Wl,--build-id")
	dbg := testprog.SplitDebug(t, prog, false)
	testprog.AddMiniDebugInfo(t, prog, dbg)
	defer func(old string) { symbol.DebugDir = old }(symbol.DebugDir)
	symbol.DebugDir = t.TempDir()
	obj, err := symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	checkNamed(t, obj, ".gnu_debugdata", false)
}

// debugServer serves the debug file dbg for build id id, as debuginfod
// does, and counts the requests.
func debugServer(t *testing.T, id, dbg string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/buildid/"+id+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, dbg)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestDebuginfodFetch: a debug file is fetched once into elfutils'
// layout (<cache>/<build id>/debuginfo, read-only, beside elfutils'
// configuration files) and read from there after; a build id no server
// has leaves an empty file of mode 000 that keeps the servers from being
// asked again.
func TestDebuginfodFetch(t *testing.T) {
	prog := testprog.BuildNames(t, "", "-O2", "-Wl,--build-id")
	dbg := testprog.SplitDebug(t, prog, false)
	id := testprog.BuildID(t, prog)
	srv, n := debugServer(t, id, dbg)
	cache := filepath.Join(t.TempDir(), "cache")
	env := map[string]string{"DEBUGINFOD_URLS": srv.URL, "DEBUGINFOD_CACHE_PATH": cache}
	got := symbol.NewTestDebuginfod(env).Find(id)
	want := filepath.Join(cache, id, "debuginfo")
	if got != want || n.Load() != 1 {
		t.Fatalf("Find = %q after %d requests, want %q after 1", got, n.Load(), want)
	}
	fi, err := os.Stat(want)
	if err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("cached file: %v %v", fi, err)
	}
	for _, f := range []string{"cache_clean_interval_s", "max_unused_age_s"} {
		if _, err := os.Stat(filepath.Join(cache, f)); err != nil {
			t.Errorf("no %s in the cache: %v", f, err)
		}
	}
	if got := symbol.NewTestDebuginfod(env).Find(id); got != want || n.Load() != 1 {
		t.Errorf("second client: %q after %d requests", got, n.Load())
	}
	const missing = "0123456789abcdef0123456789abcdef01234567"
	if got := symbol.NewTestDebuginfod(env).Find(missing); got != "" || n.Load() != 2 {
		t.Errorf("missing build id: %q after %d requests", got, n.Load())
	}
	fi, err = os.Stat(filepath.Join(cache, missing, "debuginfo"))
	if err != nil || fi.Mode().Perm() != 0 || fi.Size() != 0 {
		t.Errorf("negative cache entry: %v %v", fi, err)
	}
	if got := symbol.NewTestDebuginfod(env).Find(missing); got != "" || n.Load() != 2 {
		t.Errorf("missing build id again: %q after %d requests", got, n.Load())
	}
}

// TestDebuginfodNoAnswer: a server that accepts connections and never
// answers costs one DEBUGINFOD_TIMEOUT and one message for all the
// objects asked for; a second server that has the file still gives it.
func TestDebuginfodNoAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	var held sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held.Add(1)
			go func() { <-stop; c.Close(); held.Done() }()
		}
	}()
	t.Cleanup(func() { ln.Close(); close(stop); held.Wait() })
	prog := testprog.BuildNames(t, "", "-O2", "-Wl,--build-id")
	dbg := testprog.SplitDebug(t, prog, false)
	id := testprog.BuildID(t, prog)
	srv, _ := debugServer(t, id, dbg)
	var mu sync.Mutex
	var msgs []string
	symbol.SetWarnings(func(m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() })
	defer symbol.SetWarnings(func(m string) { t.Logf("warning: %s", m) })
	hung := "http://" + ln.Addr().String()
	d := symbol.NewTestDebuginfod(map[string]string{"DEBUGINFOD_URLS": hung, "DEBUGINFOD_CACHE_PATH": t.TempDir(), "DEBUGINFOD_TIMEOUT": "1"})
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := d.Find(strings.Repeat(string(rune('a'+i)), 40)); got != "" {
				t.Errorf("Find = %q from a server that does not answer", got)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	// The bound is what the test checks, not speed: four objects cost one
	// period of DEBUGINFOD_TIMEOUT (plus the ticker's granularity), not four.
	if took > 3*time.Second {
		t.Errorf("4 objects waited %v for a server that does not answer (DEBUGINFOD_TIMEOUT=1)", took)
	}
	if got := d.Find(strings.Repeat("e", 40)); got != "" || accepted.Load() > 4 {
		t.Errorf("after the timeout: %q, %d connections", got, accepted.Load())
	}
	mu.Lock()
	if len(msgs) != 1 || !strings.Contains(msgs[0], hung) || !strings.Contains(msgs[0], "did not answer within 1s") {
		t.Errorf("messages %q, want one about %s", msgs, hung)
	}
	mu.Unlock()
	// Both servers: the one that answers gives the file.
	d = symbol.NewTestDebuginfod(map[string]string{"DEBUGINFOD_URLS": hung + " " + srv.URL, "DEBUGINFOD_CACHE_PATH": t.TempDir(), "DEBUGINFOD_TIMEOUT": "1"})
	if got := d.Find(id); got == "" {
		t.Errorf("no file with one server answering")
	}
}
