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
	// within runs f, which must not block, and compares its result.
	within := func(what, want string, f func() string) {
		done := make(chan string, 1)
		go func() { done <- f() }()
		select {
		case got := <-done:
			if got != want {
				t.Errorf("%s: %q, want %q", what, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked opening a FIFO", what)
		}
	}
	within("findLibrary", "", func() string {
		return findLibrary("", fifo, nil, elf.ELFCLASS64, elf.EM_X86_64) + findLibrary("", "libfifo.so", []string{dir}, elf.ELFCLASS64, elf.EM_X86_64) + findLibrary("", "/dev/zero", nil, elf.ELFCLASS64, elf.EM_X86_64)
	})
	// All three fail.
	within("OpenObject, ReadNotes, OpenObject(/dev/zero)", "true true true", func() string {
		_, err1 := OpenObject(fifo)
		_, err2 := ReadNotes(fifo, ".note.stapsdt")
		_, err3 := OpenObject("/dev/zero")
		return fmt.Sprint(err1 != nil, err2 != nil, err3 != nil)
	})
}
