//go:build linux

package usdt_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/usdt"
)

// TestSemaphoreOutsideMapping: a note whose semaphore is not in a
// writable segment of its own file (code, or .bss, which no file page
// backs) is refused, and the kernel is never asked to write there; the
// real semaphore is accepted.
func TestSemaphoreOutsideMapping(t *testing.T) {
	prog := testprog.BuildUSDT(t, "-O2")
	obj := testprog.OpenObject(t, prog)
	notes, err := usdt.Notes(obj)
	if err != nil {
		t.Fatal(err)
	}
	var guarded *usdt.Note
	for i := range notes {
		if notes[i].Name == "guarded" {
			guarded = &notes[i]
		}
	}
	if guarded == nil || guarded.Semaphore == 0 {
		t.Fatalf("no guarded probe with a semaphore in %v", notes)
	}
	sem, _ := obj.SymbolValue("myprov_guarded_semaphore")
	main, _ := obj.SymbolValue("main")
	bss, _ := obj.SymbolValue("total")
	if sem != guarded.Semaphore || main == 0 || bss == 0 {
		t.Fatalf("semaphore %#x, note's %#x, main %#x, total %#x", sem, guarded.Semaphore, main, bss)
	}
	if off, ok := usdt.SemaphoreOffset(obj, sem); !ok {
		t.Errorf("the real semaphore at %#x is refused", sem)
	} else if fo, _ := obj.FileOffset(sem); fo != off {
		t.Errorf("semaphore file offset %#x, want %#x", off, fo)
	}
	for what, addr := range map[string]uint64{"code": main, ".bss": bss, "unmapped": 1 << 60, "zero page": 8} {
		if off, ok := usdt.SemaphoreOffset(obj, addr); ok {
			t.Errorf("a semaphore in %s (%#x) is accepted at file offset %#x", what, addr, off)
		}
	}

	// The same program with the note's semaphore pointing into main's
	// code: its probe is not made at all.
	raw, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	desc := make([]byte, 24)
	binary.LittleEndian.PutUint64(desc, guarded.PC)
	binary.LittleEndian.PutUint64(desc[8:], guarded.Base)
	binary.LittleEndian.PutUint64(desc[16:], guarded.Semaphore)
	at := bytes.Index(raw, desc)
	if at < 0 || bytes.Contains(raw[at+1:], desc) {
		t.Fatal("cannot find the guarded probe's note in the file")
	}
	for what, addr := range map[string]uint64{"code": main, ".bss": bss} {
		patched := bytes.Clone(raw)
		binary.LittleEndian.PutUint64(patched[at+16:], addr)
		path := filepath.Join(t.TempDir(), "usdt")
		if err := os.WriteFile(path, patched, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{prog, path} {
			probes, err := usdt.New(nil, p).Probes(provider.Desc{Provider: "myprov", Name: "guarded"})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[string]int{prog: 1, path: 0}[p]; len(probes) != want {
				t.Errorf("semaphore in %s, %s: %d probes, want %d", what, p, len(probes), want)
			}
		}
	}
}
