//go:build linux

package symbol

import (
	"debug/elf"
	"fmt"
	"os/exec"
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

// TestPendingModulesOnce: the libraries a snapshot's process needs are
// worked out once per snapshot, reading /etc/ld.so.conf and the
// process's environment once, however many objects need a library looked
// for and however often the providers ask; a new snapshot works them
// out again.
func TestPendingModulesOnce(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	// Wait for the dynamic linker to have mapped libc.
	var p *Process
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		q, err := ReadProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Modules()) >= 3 || time.Now().After(deadline) {
			p = q
			break
		}
	}
	if len(p.Modules()) < 2 {
		t.Skip("sleep is not dynamically linked here")
	}
	before := ProcessReads()
	for i := 0; i < 4; i++ {
		p.PendingModules()
	}
	r := ProcessReads()
	if d := r.LdSoConf - before.LdSoConf; d != 1 {
		t.Errorf("/etc/ld.so.conf parsed %d times for one snapshot, want 1", d)
	}
	if d := r.Environ - before.Environ; d != 1 {
		t.Errorf("environment read %d times for one snapshot, want 1", d)
	}
	q, err := ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	q.PendingModules()
	if d := ProcessReads().LdSoConf - r.LdSoConf; d != 1 {
		t.Errorf("a new snapshot parsed /etc/ld.so.conf %d times, want 1", d)
	}
}
