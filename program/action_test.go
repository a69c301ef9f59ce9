package program

import "testing"

// TestActionNames pins the one enumeration's names: every action has its
// D name (what -x oformat=json writes as "action"), each name once.
func TestActionNames(t *testing.T) {
	seen := map[string]Action{}
	for a := ActArg; a <= ActChill; a++ {
		n := a.String()
		if n == "" || n == "unknown" {
			t.Errorf("action %d has no name", a)
			continue
		}
		if b, ok := seen[n]; ok {
			t.Errorf("actions %d and %d are both %q", b, a, n)
		}
		seen[n] = a
	}
	if ActPrintf.String() != "printf" || ActStack.String() != "stack" || ActSym.String() != "sym" {
		t.Errorf("printf, stack, sym named %q, %q, %q", ActPrintf, ActStack, ActSym)
	}
	if got := (ActChill + 1).String(); got != "unknown" {
		t.Errorf("an action past the last is %q, want unknown", got)
	}
}
