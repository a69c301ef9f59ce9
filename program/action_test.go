package program

import "testing"

// TestActionNames pins the one enumeration's names: every action has its
// D name (what -x oformat=json writes as "action"), each name once.
func TestActionNames(t *testing.T) {
	seen := map[string]Action{}
	last := Action(len(actionNames) - 1)
	for a := ActArg; a <= last; a++ {
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
	if last != ActPcap {
		t.Errorf("the last action is %q, want pcap (a new action goes last, with its name)", last)
	}
	if got := (last + 1).String(); got != "unknown" {
		t.Errorf("an action past the last is %q, want unknown", got)
	}
}
