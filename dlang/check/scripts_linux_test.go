//go:build linux

package check

import (
	"os"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// TestScriptFile checks the D script named by $DTRACE_CHECK_SCRIPT with
// the running kernel's types (a manual aid; skipped when unset).
func TestScriptFile(t *testing.T) {
	path := os.Getenv("DTRACE_CHECK_SCRIPT")
	if path == "" {
		t.Skip("DTRACE_CHECK_SCRIPT not set")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k := kernelForTest()
	fset := syntax.NewFileSet()
	prog, err := (&syntax.Config{IsTypeName: KernelTypeNames(k)}).Parse(fset, path, src)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Check(fset, []*syntax.Program{prog}, &Config{MacroArgs: []string{path}, Kernel: k, Source: func(string) []byte { return src }})
	if err != nil {
		t.Fatal(err.(ErrorList)[0].Tagged())
	}
}
