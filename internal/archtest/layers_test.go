package archtest

import (
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/dtrace-go/dtrace"

// floors orders the module's packages from the bottom up: a package may
// import packages of lower floors, and of its own floor where sameFloor
// allows it, never of a higher one (so the graph has no cycles and the
// contract packages stay below what uses them). A pattern ending in "/"
// names the packages below a directory; the longest match wins.
var floors = [][]string{
	// 0: the contracts and leaf utilities: nothing of ours below them.
	{"internal/abi", "internal/bpfdis", "internal/kernel", "internal/cpp", "internal/tracefs", "internal/lockedbuf", "internal/dof",
		"internal/kfeature", "internal/cnum", "program", "format", "symbol", "unwind", "dlang/syntax"},
	// 1: the D language, aggregation values, the event model, the
	// provider interface.
	{"dlang/types", "dlang/check", "dlang/ktypes", "dlib", "aggregate", "output", "provider"},
	// 2: what renderers share: the JSON record model.
	{"output/jsonrec"},
	// 3: the generator, the providers, the renderers.
	{"codegen", "dlang/ctf", "provider/", "output/"},
	// 4: the run-time stages; the registry of output formats.
	{"loader", "consumer", "output/formats"},
	// 5: the library facade.
	{"dtrace"},
	// 6: what embeds the library: the guest agent, the commands,
	// examples, benchmarks, the corpus harness.
	{"agent", "cmd/", "examples/", "bench/", "conformance"},
	// 7: test scaffolding and test-only packages, which production code
	// never imports.
	{"internal/testutil", "internal/testutil/", "internal/archtest", "internal/flowtest", "internal/hardstop",
		"internal/kerneltest", "internal/kvartest", "provider/ktrace/ktracetest", "internal/containertest",
		"internal/edgetest", "internal/fleettest", "internal/ustacktest"},
}

// sameFloor says which imports within one floor are allowed: between
// providers (ktrace's users, lockstat on fbt, usdt on pid), within the D
// language and within the top floors. Renderers do not import each
// other: they share what they must through packages below them (output,
// output/jsonrec).
func sameFloor(from, to string) bool {
	switch {
	case strings.HasPrefix(from, "output/"), strings.HasPrefix(to, "output/"):
		return false
	case from == "codegen" || to == "codegen":
		return false
	}
	return true
}

// floorOf returns the floor of package p (relative to the module) and
// the pattern that placed it there.
func floorOf(p string) (int, string) {
	best, bestLen, pat := -1, -1, ""
	for i, f := range floors {
		for _, q := range f {
			match := q == p || strings.HasSuffix(q, "/") && strings.HasPrefix(p, q)
			if match && len(q) > bestLen {
				best, bestLen, pat = i, len(q), q
			}
		}
	}
	return best, pat
}

// imports returns the module's packages (relative names) and their
// imports of the module's packages, from go list, without tests.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	statSources(t)
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", module+"/...")
	cmd.Stderr = new(strings.Builder)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, cmd.Stderr)
	}
	g := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, imps, _ := strings.Cut(line, ":")
		p = rel(p)
		g[p] = nil
		for _, i := range strings.Fields(imps) {
			if r := rel(i); r != i {
				g[p] = append(g[p], r)
			}
		}
	}
	return g
}

func rel(p string) string {
	if p == module {
		return "."
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r
	}
	return p
}

// TestFloors fails on an import from a lower floor to a higher one, on
// one within a floor that sameFloor forbids, and on a package no floor
// names.
func TestFloors(t *testing.T) {
	g := imports(t)
	if len(g) < 40 {
		t.Fatalf("go list found %d packages; the module has more", len(g))
	}
	for p, imps := range g {
		fp, _ := floorOf(p)
		if fp < 0 {
			t.Errorf("package %s is on no floor: place it in floors", p)
			continue
		}
		for _, i := range imps {
			fi, _ := floorOf(i)
			switch {
			case fi > fp:
				t.Errorf("%s (floor %d) imports %s (floor %d): an import runs up", p, fp, i, fi)
			case fi == fp && !sameFloor(p, i) && path.Dir(i) != p:
				t.Errorf("%s imports %s on its own floor", p, i)
			}
		}
	}
}

// TestRuntimeFreeOfCompiler pins issue 24's cut: the loader and the
// consumer (and so an embedder that only loads and consumes a compiled
// program) link neither the generator nor anything of the D language;
// the compiled program's description imports nothing of ours but
// internal/abi.
func TestRuntimeFreeOfCompiler(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/consumer", module+"/loader").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		r := rel(p)
		if r == "codegen" || strings.HasPrefix(r, "dlang/") {
			t.Errorf("consumer or loader depends on %s", r)
		}
	}
	for _, i := range imports(t)["program"] {
		if i != "internal/abi" {
			t.Errorf("program imports %s", i)
		}
	}
}

// statSources stats every Go file of the module, so that go test's
// cache, which cannot see what go list reads, reruns the tests when one
// changes.
func statSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
