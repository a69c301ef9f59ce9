//go:build linux

package symbol_test

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/symbol"
)

var (
	_ format.Symbolizer  = (*symbol.Symbolizer)(nil)
	_ format.ModuleBaser = (*symbol.Symbolizer)(nil)
)

func TestKernelSymbols(t *testing.T) {
	k, err := symbol.KernelSymbols()
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := k.Addr("schedule")
	if !ok {
		t.Fatal("no schedule in /proc/kallsyms")
	}
	s := symbol.NewSymbolizer()
	mod, fn, off, ok := s.KernelSym(addr + 3)
	if !ok || mod != "vmlinux" || fn != "schedule" || off != 3 {
		t.Errorf("KernelSym(schedule+3) = %s`%s+%#x %v", mod, fn, off, ok)
	}
}

// funcAddr returns the run-time address of a function of one module of p.
func funcAddr(t *testing.T, p *symbol.Process, module, fn string) uint64 {
	t.Helper()
	for _, mod := range p.Modules() {
		if mod.Name != module {
			continue
		}
		obj, err := symbol.LoadObject(p.OpenPath(mod))
		if err != nil {
			t.Fatal(err)
		}
		bias, ok := p.Bias(mod, obj)
		if !ok {
			t.Fatalf("no bias for %s", module)
		}
		v, ok := obj.SymbolValue(fn)
		if !ok {
			t.Fatalf("no %s in %s", fn, module)
		}
		return v + bias
	}
	t.Fatalf("no module %s", module)
	return 0
}

// TestUserSymAfterExit resolves addresses of a process's executable and
// of libc after the process has exited, from the snapshot taken while it
// ran, and prints them as ustack() frames.
func TestUserSymAfterExit(t *testing.T) {
	for _, pie := range []string{"-no-pie", "-pie"} {
		t.Run(pie, func(t *testing.T) {
			prog := testprog.BuildWork(t, "-O2", pie)
			cmd := testprog.Start(t, prog, "1").Cmd
			s := symbol.NewSymbolizer()
			p, err := s.Snapshot(cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			work := funcAddr(t, p, "work", "work")
			malloc := funcAddr(t, p, "libc.so.6", "malloc")
			cmd.Process.Kill()
			cmd.Wait()

			obj, fn, off, ok := s.UserSym(cmd.Process.Pid, work+2)
			if !ok || obj != prog || fn != "work" || off != 2 {
				t.Errorf("UserSym(work+2) = %s`%s+%#x %v", obj, fn, off, ok)
			}
			if obj, fn, off, ok = s.UserSym(cmd.Process.Pid, malloc); !ok || filepath.Base(obj) != "libc.so.6" || fn != "malloc" || off != 0 {
				t.Errorf("UserSym(malloc) = %s`%s+%#x %v", obj, fn, off, ok)
			}
			if _, _, _, ok = s.UserSym(cmd.Process.Pid, 8); ok {
				t.Error("UserSym(8) resolved")
			}
			// umod() keys: every address of a module has one base, the
			// lowest address the module is mapped at.
			wb, ok1 := s.UserModBase(cmd.Process.Pid, work)
			wb2, ok2 := s.UserModBase(cmd.Process.Pid, work+2)
			mb, ok3 := s.UserModBase(cmd.Process.Pid, malloc)
			if !ok1 || !ok2 || !ok3 || wb != wb2 || wb == mb || wb > work || mb > malloc {
				t.Errorf("UserModBase: work %#x (%#x %v), work+2 %#x %v, malloc %#x (%#x %v)", work, wb, ok1, wb2, ok2, malloc, mb, ok3)
			}
			var b bytes.Buffer
			pr := &format.Printer{Sym: s}
			if err := pr.PrintStack(&b, program.Stack{User: true, PID: cmd.Process.Pid, PCs: []uint64{work + 2, malloc}}); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("\n%[1]*[2]swork`work+0x2\n%[1]*[2]slibc.so.6`malloc\n", format.DefaultStackIndent, "")
			if b.String() != want {
				t.Errorf("ustack printed %q, want %q", b.String(), want)
			}
		})
	}
}

// TestStripped: an address in an object without symbols resolves to the
// object alone.
func TestStripped(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2", "-s")
	cmd := testprog.Start(t, prog, "1").Cmd
	s := symbol.NewSymbolizer()
	p, err := s.Snapshot(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var text uint64
	for _, m := range p.Maps {
		if m.Path == prog && m.Exec() {
			text = m.Start + 0x10
		}
	}
	obj, fn, _, ok := s.UserSym(cmd.Process.Pid, text)
	if !ok || obj != prog || fn != "" {
		t.Errorf("UserSym(stripped text) = %s`%s %v", obj, fn, ok)
	}
}

// TestWatch: a process snapshot before the dynamic linker ran (as dtrace
// -c holds it) resolves libc addresses after it exits, because the
// Symbolizer follows its mappings while it lives.
func TestWatch(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	cmd := exec.Command(prog, "1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	started := make(chan error)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // ptrace requests come from the tracer thread
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		var ws unix.WaitStatus
		_, err := unix.Wait4(cmd.Process.Pid, &ws, unix.WALL, nil)
		started <- err
		<-release
		unix.PtraceDetach(cmd.Process.Pid)
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	s := symbol.NewSymbolizer()
	defer s.Close()
	p, err := s.Snapshot(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Modules() {
		if m.Name == "libc.so.6" {
			t.Fatal("libc mapped before the process ran")
		}
	}
	close(release)
	var malloc uint64
	for deadline := time.Now().Add(5 * time.Second); malloc == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("libc never mapped")
		}
		q, err := symbol.ReadProcess(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range q.Modules() {
			if m.Name == "libc.so.6" {
				malloc = funcAddr(t, q, "libc.so.6", "malloc")
			}
		}
	}
	// Longer than the longest interval between two reads.
	time.Sleep(300 * time.Millisecond)
	stdin.Write([]byte{'\n'})
	cmd.Wait()
	if _, fn, _, ok := s.UserSym(cmd.Process.Pid, malloc); !ok || fn != "malloc" {
		t.Errorf("UserSym(malloc) after exit = %q, %v", fn, ok)
	}
}

// TestDebugFile: a stripped library's static functions come from its
// separate debug file, found by build id.
func TestDebugFile(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	stripped := f.Section(".symtab") == nil
	f.Close()
	matches, _ := filepath.Glob(symbol.DebugDir + "/.build-id/*/*.debug")
	if !stripped || len(matches) == 0 {
		t.Skip("needs a stripped libc and its debug file (libc6-dbg)")
	}
	obj, err := symbol.OpenObject(libc)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := obj.SymbolValue("__libc_start_call_main")
	if !ok {
		t.Skip("libc's debug file is not installed (libc6-dbg)")
	}
	if f, ok := obj.Lookup(v + 3); !ok || f.Name != "__libc_start_call_main" {
		t.Errorf("Lookup(__libc_start_call_main+3) = %+v, %v", f, ok)
	}
}

// TestVdso: an address in a process's vdso, which is in no file, is
// named from the tracer's own copy: [vdso]`clock_gettime+1 (or its
// __vdso_ alias), at the address debug/elf finds it in this process.
func TestVdso(t *testing.T) {
	p, err := symbol.ReadProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var vdso *symbol.Mapping
	for i, m := range p.Maps {
		if m.Path == "[vdso]" {
			vdso = &p.Maps[i]
		}
	}
	if vdso == nil {
		t.Fatal("no [vdso] mapping")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	f, err := elf.NewFile(io.NewSectionReader(mem, int64(vdso.Start), int64(vdso.End-vdso.Start)))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var addr uint64
	for _, s := range syms {
		if s.Name == "__vdso_clock_gettime" {
			addr = vdso.Start + s.Value - f.Progs[0].Vaddr + 1
		}
	}
	if addr == 0 {
		t.Fatal("no __vdso_clock_gettime in the vdso")
	}
	s := symbol.NewSymbolizer()
	obj, fn, off, ok := s.UserSym(os.Getpid(), addr)
	if !ok || obj != "[vdso]" || !strings.HasSuffix(fn, "clock_gettime") || off != 1 {
		t.Errorf("UserSym(clock_gettime+1) = %s`%s+%#x %v", obj, fn, off, ok)
	}
	// umod() keys of vdso addresses aggregate on the mapping's start.
	if base, ok := s.UserModBase(os.Getpid(), addr); !ok || base != vdso.Start {
		t.Errorf("UserModBase = %#x %v, want %#x", base, ok, vdso.Start)
	}
}

// TestPIDs lists this process and its parent among the running ones, and
// nothing that is not a process.
func TestPIDs(t *testing.T) {
	seen := map[int]bool{}
	for _, pid := range symbol.PIDs() {
		if pid <= 0 {
			t.Errorf("pid %d", pid)
		}
		seen[pid] = true
	}
	if !seen[os.Getpid()] || !seen[os.Getppid()] {
		t.Errorf("PIDs lacks this process (%d) or its parent (%d): %d ids", os.Getpid(), os.Getppid(), len(seen))
	}
}

// TestCodeFile: a CodeFile reads each function's code as Object.Code
// does, through one open file, and nothing once closed.
func TestCodeFile(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	obj, err := symbol.OpenObject(prog)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.OpenCode()
	n := 0
	var last symbol.Func
	for _, f := range obj.Funcs() {
		if f.Size == 0 || !obj.Executable(f.Value) {
			continue
		}
		want, err := obj.Code(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Code(f)
		if err != nil || !bytes.Equal(got, want) || uint64(len(got)) != f.Size {
			t.Errorf("CodeFile.Code(%s) = %d bytes, %v; Object.Code gives %d, size %d", f.Name, len(got), err, len(want), f.Size)
		}
		n++
		last = f
	}
	if n < 3 {
		t.Fatalf("only %d functions with code in %s", n, prog)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Code(last); err == nil {
		t.Error("Code after Close succeeded")
	}
}
