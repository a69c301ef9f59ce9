package format

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// mappedSyms is fakeSyms that also knows the mapping of /usr/bin/prog's
// text, from 0x400800.
type mappedSyms struct{ fakeSyms }

func (mappedSyms) UserMapping(pid int, addr uint64) (string, uint64, bool) {
	if pid == 42 && addr >= 0x400800 && addr < 0x402000 {
		return "/usr/bin/prog", 0x400800, true
	}
	return "", 0, false
}

// TestNoResolve checks the noresolve forms of user addresses: the
// object's base name and the offset into its mapping, or the bare address
// where nothing is mapped.
func TestNoResolve(t *testing.T) {
	p := &Printer{Sym: mappedSyms{}, NoResolve: true}
	for _, tt := range []struct {
		s    program.Sym
		want string
	}{
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserAddr}, "prog:0x810"},
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserSym}, "prog:0x810"},
		{program.Sym{Addr: 0x900000, PID: 42, Kind: program.UserAddr}, "0x900000"},
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserMod}, "prog"},
	} {
		if got := p.SymString(tt.s); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
	var b strings.Builder
	if err := p.PrintStack(&b, program.Stack{PCs: []uint64{0x401010, 0x900000}, User: true, PID: 42}); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "prog:0x810\n") || !strings.Contains(got, "0x900000\n") || strings.Contains(got, "main") {
		t.Errorf("ustack:\n%s", got)
	}
	// Resolved, as without the option.
	p.NoResolve = false
	if got := p.SymString(program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserAddr}); got != "prog`main+0x10" {
		t.Errorf("resolved uaddr: %q", got)
	}
}
