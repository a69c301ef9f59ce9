//go:build linux

package symbol_test

import (
	"os"
	"testing"

	"github.com/dtrace-go/dtrace/symbol"
)

func BenchmarkReadKallsyms(b *testing.B) {
	for i := 0; i < b.N; i++ {
		f, err := os.Open("/proc/kallsyms")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := symbol.ReadKallsyms(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

func BenchmarkKernelSym(b *testing.B) {
	k, err := symbol.KernelSymbols()
	if err != nil {
		b.Fatal(err)
	}
	addr, _ := k.Addr("schedule")
	s := symbol.NewSymbolizer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.KernelSym(addr + uint64(i%64))
	}
}

// BenchmarkUserSym resolves addresses in libc of this process: the cost
// of one ustack() frame once the object is loaded.
func BenchmarkUserSym(b *testing.B) {
	s := symbol.NewSymbolizer()
	defer s.Close()
	p, err := s.Snapshot(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	var addr uint64
	for _, m := range p.Maps {
		if m.Exec() && m.File() {
			addr = m.Start + 0x100
			break
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, _, ok := s.UserSym(os.Getpid(), addr+uint64(i%256)); !ok {
			b.Fatal("not resolved")
		}
	}
}
