package program

import "testing"

// TestStmt checks dtrace's statement numbers: one per probe description,
// so "BEGIN,ERROR,END { } BEGIN { }" numbers the second clause 3.
func TestStmt(t *testing.T) {
	s := &Spec{Clauses: []*ClauseSpec{
		{Probes: []string{"BEGIN", "ERROR", "END"}},
		{Probes: []string{"BEGIN"}},
		{Probes: []string{"BEGIN", "ERROR"}},
		{},
	}}
	for i, want := range []int{0, 3, 4, 6} {
		if got := s.Stmt(i); got != want {
			t.Errorf("Stmt(%d) = %d, want %d", i, got, want)
		}
	}
}
