package usdt

import (
	"strings"
	"testing"
)

// FuzzParseNote decodes stapsdt note descriptors as any ELF file can
// carry them: an error or a note, never a panic. Seeds are descriptors of
// PostgreSQL 15's probes.
func FuzzParseNote(f *testing.F) {
	f.Fuzz(func(t *testing.T, desc []byte) {
		n, err := ParseNote(desc)
		if err != nil {
			return
		}
		if len(n.Provider)+len(n.Name) > len(desc) {
			t.Fatalf("names longer than the descriptor")
		}
		if name := ProbeName(n.Name); len(name) > len(n.Name) {
			t.Fatalf("probe name %q is longer than its note name %q", name, n.Name)
		}
	})
}

// FuzzParseArgs parses argument specifications ("-4@%eax 8@-8(%rbp)"):
// what parses is one of the kinds the code generator handles, with a size
// it can load. Seeds are the argument strings of PostgreSQL 15's probes
// and the test program's.
func FuzzParseArgs(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		args, err := ParseArgs(s)
		if len(args) > len(strings.Fields(s)) {
			t.Fatalf("%d arguments from %q", len(args), s)
		}
		if err == nil && len(args) != len(strings.Fields(s)) {
			t.Fatalf("%d arguments from %q and no error", len(args), s)
		}
		for _, a := range args {
			switch a.Size {
			case 1, 2, 4, 8:
			default:
				t.Fatalf("%q: size %d", s, a.Size)
			}
			switch a.Kind {
			case ArgConst:
			case ArgReg:
				if regs64[a.Reg] == "" || (a.Shift != 0 && a.Shift != 8) {
					t.Fatalf("%q: register %q shift %d", s, a.Reg, a.Shift)
				}
			case ArgMem:
				if a.Reg == "" && a.Index == "" && a.Sym == "" {
					t.Fatalf("%q: memory operand with no base", s)
				}
				if a.Index != "" && a.Scale != 1 && a.Scale != 2 && a.Scale != 4 && a.Scale != 8 {
					t.Fatalf("%q: scale %d", s, a.Scale)
				}
			default:
				t.Fatalf("%q: kind %d", s, a.Kind)
			}
		}
	})
}
