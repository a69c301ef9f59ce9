//go:build linux

package codegen

import (
	"os"
	"testing"
)

// TestDebugFile loads the D file named by $CODEGEN_DEBUG_FILE and fires
// BEGIN once, for investigating corpus programs.
func TestDebugFile(t *testing.T) {
	name := os.Getenv("CODEGEN_DEBUG_FILE")
	if name == "" {
		t.Skip("set CODEGEN_DEBUG_FILE")
	}
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := compileD(t, string(src), Options{})
	r := loadSpec(t, spec)
	t.Log(render(t, spec, r.fire(t)))
}

// TestDebugDump prints the instructions generated for $CODEGEN_DEBUG_FILE.
func TestDebugDump(t *testing.T) {
	name := os.Getenv("CODEGEN_DEBUG_FILE")
	if name == "" {
		t.Skip("set CODEGEN_DEBUG_FILE")
	}
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	spec := compileD(t, string(src), Options{})
	for _, c := range spec.Clauses {
		t.Logf("%v", c.Insns)
	}
}
