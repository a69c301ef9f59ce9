package output

import "testing"

func TestPop(t *testing.T) {
	s := []int{1, 2}
	if top, ok := Pop(&s); top != 2 || !ok || len(s) != 1 {
		t.Fatalf("Pop of [1 2] = %d, %v, left %v; want 2, true, [1]", top, ok, s)
	}
	if top, ok := Pop(&s); top != 1 || !ok || len(s) != 0 {
		t.Fatalf("Pop of [1] = %d, %v, left %v; want 1, true, []", top, ok, s)
	}
	if top, ok := Pop(&s); top != 0 || ok {
		t.Fatalf("Pop of [] = %d, %v; want 0, false", top, ok)
	}
}
