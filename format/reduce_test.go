package format

import "testing"

type baseSyms struct{ fakeSyms }

func (baseSyms) KernelModBase(addr uint64) (uint64, bool) { return addr &^ 0xffff, true }
func (baseSyms) UserModBase(pid int, addr uint64) (uint64, bool) {
	return 0x400000, pid == 42
}

func TestReduceKey(t *testing.T) {
	tests := []struct {
		p    *Printer
		in   Value
		want Value
	}{
		{&Printer{Sym: fakeSyms{}}, Sym{Addr: 0xffffffff82000010, Kind: KernelSym}, Sym{Addr: 0xffffffff82000000, Kind: KernelSym}},
		{&Printer{Sym: fakeSyms{}}, Sym{Addr: 0x401020, PID: 42, Kind: UserSym}, Sym{Addr: 0x401000, PID: 42, Kind: UserSym}},
		{&Printer{Sym: fakeSyms{}}, Sym{Addr: 0x401020, PID: 42, Kind: UserAddr}, Sym{Addr: 0x401020, PID: 42, Kind: UserAddr}},
		{&Printer{Sym: fakeSyms{}}, Sym{Addr: 0xffffffff82000010, Kind: KernelMod}, Sym{Addr: 0xffffffff82000010, Kind: KernelMod}},
		{&Printer{Sym: baseSyms{}}, Sym{Addr: 0xffffffff82000010, Kind: KernelMod}, Sym{Addr: 0xffffffff82000000, Kind: KernelMod}},
		{&Printer{Sym: baseSyms{}}, Sym{Addr: 0x401020, PID: 42, Kind: UserMod}, Sym{Addr: 0x400000, PID: 42, Kind: UserMod}},
		{&Printer{}, Sym{Addr: 0x10, Kind: KernelSym}, Sym{Addr: 0x10, Kind: KernelSym}},
		{&Printer{Sym: fakeSyms{}}, I32(5), I32(5)},
	}
	for _, tt := range tests {
		if got := tt.p.ReduceKey(tt.in); got != tt.want {
			t.Errorf("ReduceKey(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}
