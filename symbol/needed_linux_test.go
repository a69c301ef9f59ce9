//go:build linux

package symbol

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFindLibraryNotRegular: a DT_NEEDED entry naming a FIFO (which would
// block the open until a writer came) or a device is not a library, and
// the ELF reader opens no FIFO or device a traced process names.
func TestFindLibraryNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "libfifo.so")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		done <- findLibrary("", fifo, nil, elf.ELFCLASS64, elf.EM_X86_64) + findLibrary("", "libfifo.so", []string{dir}, elf.ELFCLASS64, elf.EM_X86_64) + findLibrary("", "/dev/zero", nil, elf.ELFCLASS64, elf.EM_X86_64)
	}()
	select {
	case got := <-done:
		if got != "" {
			t.Errorf("findLibrary found %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("findLibrary blocked opening a FIFO")
	}
	go func() {
		_, err1 := OpenObject(fifo)
		_, err2 := ReadNotes(fifo, ".note.stapsdt")
		_, err3 := OpenObject("/dev/zero")
		done <- fmt.Sprint(err1 != nil, err2 != nil, err3 != nil)
	}()
	select {
	case got := <-done:
		if got != "true true true" {
			t.Errorf("OpenObject, ReadNotes, OpenObject(/dev/zero) errors: %s, want all", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OpenObject or ReadNotes blocked opening a FIFO")
	}
}
