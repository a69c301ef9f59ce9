package abi_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/abi"
)

// notYet lists directories whose code may still spell map names itself
// (none: every package imports internal/abi).
var notYet []string

// TestMapNamesNotRestated enforces that the map names are written down
// only here: no string literal in a non-test Go file elsewhere in the
// module is one of them (or starts like dt_agg_N and dt_aggc_N).
func TestMapNamesNotRestated(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	names := map[string]bool{}
	for _, n := range []string{abi.MapBuf, abi.MapScratch, abi.MapState, abi.MapCPUState, abi.MapGVars,
		abi.MapTVars, abi.MapAssoc, abi.MapSpec, abi.MapZero, abi.MapProbes} {
		names[n] = true
	}
	restates := func(lit string) bool {
		s, err := strconv.Unquote(lit)
		return err == nil && (names[s] || strings.HasPrefix(s, abi.MapAggPrefix) || strings.HasPrefix(s, abi.MapAggCachePrefix))
	}

	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || rel == "internal/abi") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, dir := range notYet {
			if strings.HasPrefix(rel, dir) {
				return nil
			}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		fset := token.NewFileSet()
		var sc scanner.Scanner
		sc.Init(fset.AddFile(rel, -1, len(src)), src, nil, 0)
		for {
			pos, tok, lit := sc.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.STRING && restates(lit) {
				t.Errorf("%s: the map name %s: use internal/abi", fset.Position(pos), lit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Errorf("only %d Go files checked: is the walk looking at the module?", checked)
	}
}
