package format

import (
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

type baseSyms struct{ fakeSyms }

func (baseSyms) KernelModBase(addr uint64) (uint64, bool) { return addr &^ 0xffff, true }
func (baseSyms) UserModBase(pid int, addr uint64) (uint64, bool) {
	return 0x400000, pid == 42
}

func TestReduceKey(t *testing.T) {
	tests := []struct {
		p    *Printer
		in   program.Value
		want program.Value
	}{
		{&Printer{Sym: fakeSyms{}}, program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelSym}, program.Sym{Addr: 0xffffffff82000000, Kind: program.KernelSym}},
		{&Printer{Sym: fakeSyms{}}, program.Sym{Addr: 0x401020, PID: 42, Kind: program.UserSym}, program.Sym{Addr: 0x401000, PID: 42, Kind: program.UserSym}},
		{&Printer{Sym: fakeSyms{}}, program.Sym{Addr: 0x401020, PID: 42, Kind: program.UserAddr}, program.Sym{Addr: 0x401020, PID: 42, Kind: program.UserAddr}},
		{&Printer{Sym: fakeSyms{}}, program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelMod}, program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelMod}},
		{&Printer{Sym: baseSyms{}}, program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelMod}, program.Sym{Addr: 0xffffffff82000000, Kind: program.KernelMod}},
		{&Printer{Sym: baseSyms{}}, program.Sym{Addr: 0x401020, PID: 42, Kind: program.UserMod}, program.Sym{Addr: 0x400000, PID: 42, Kind: program.UserMod}},
		{&Printer{}, program.Sym{Addr: 0x10, Kind: program.KernelSym}, program.Sym{Addr: 0x10, Kind: program.KernelSym}},
		{&Printer{Sym: fakeSyms{}}, program.I32(5), program.I32(5)},
	}
	for _, tt := range tests {
		if got := tt.p.ReduceKey(tt.in); got != tt.want {
			t.Errorf("ReduceKey(%#v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}
