package program_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/dtrace-go/dtrace/"

// deps lists the packages of this module that pkgs depend on.
func deps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	var ours []string
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, module) {
			ours = append(ours, strings.TrimPrefix(p, module))
		}
	}
	return ours
}

// TestLeaf pins the package's place: it imports nothing of this module
// but internal/abi, and the loader and the consumer, which read a Spec,
// link neither the generator nor anything of the D language.
func TestLeaf(t *testing.T) {
	for _, p := range deps(t, ".") {
		if p != "program" && p != "internal/abi" {
			t.Errorf("package program depends on %s", p)
		}
	}
	for _, p := range deps(t, "../consumer", "../loader") {
		if p == "codegen" || strings.HasPrefix(p, "dlang/") {
			t.Errorf("consumer or loader depends on %s", p)
		}
	}
}
