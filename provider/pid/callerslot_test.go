package pid

import "testing"

func TestCallerSlot(t *testing.T) {
	plain := []byte{0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc}                   // push %rbp; mov %rsp,%rbp; mov %edi,-4(%rbp)
	cet := []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x8b, 0xec, 0xc3}         // endbr64; push %rbp; mov %rsp,%rbp (8b form); ret
	other := []byte{0x48, 0x83, 0xec, 0x08, 0x55, 0x48, 0x89, 0xe5, 0xc3, 0x90} // sub $8,%rsp first: not understood
	for _, tc := range []struct {
		code []byte
		off  uint64
		slot int16
		ok   bool
	}{
		{plain, 0, 0, true},
		{plain, 1, 8, true},
		{plain, 4, 0, false},
		{plain, 2, 0, false}, // inside the mov
		{cet, 0, 0, true},
		{cet, 4, 0, true},
		{cet, 5, 8, true},
		{cet, 8, 0, false},
		{other, 0, 0, true},
		{other, 4, 0, false},
		{other, 5, 0, false},
	} {
		slot, ok := CallerSlot(tc.code, tc.off)
		if slot != tc.slot || ok != tc.ok {
			t.Errorf("CallerSlot(% x, %d) = %d, %v; want %d, %v", tc.code, tc.off, slot, ok, tc.slot, tc.ok)
		}
	}
}
