//go:build linux

package check

import (
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// TestScriptFile checks the D script named by $DTRACE_CHECK_SCRIPT with
// the running kernel's types (a manual aid; skipped when unset).
func TestScriptFile(t *testing.T) {
	path, src := testprog.EnvFile(t, "DTRACE_CHECK_SCRIPT")
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
