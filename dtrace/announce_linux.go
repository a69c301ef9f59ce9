//go:build linux

package dtrace

import (
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"golang.org/x/sys/unix"
)

// announceWatcher is the Linux analogue of illumos's helper registration
// (drti.o's constructor registering a -G program's providers with the
// kernel): -G's object has a constructor that makes one prctl(2) call
// with a marker no real option has (AnnounceOption, AnnounceArg: see
// announceAssembly); while dtrace runs with a description that may name
// the USDT probes of processes that do not exist yet, a program on
// raw_syscalls:sys_enter sees that call, reports the caller's pid through
// a ring buffer and then stops the process (SIGSTOP, delivered before the
// call returns to the constructor, so before main). User space reads the
// process's notes, enables the probes that match and resumes it
// (SIGCONT); a process with nothing matching is resumed at once.
//
// The program stops a process only after its pid is in the ring buffer,
// that is only while dtrace's user space holds the ring buffer and the
// attachment: when dtrace closes (or dies: the kernel then closes its
// descriptors and detaches the program) no process is stopped any more,
// and close resumes those whose pid it had not handled yet. The one gap
// is dtrace killed (SIGKILL) between the stop and the resume: that
// process stays stopped until someone sends it SIGCONT.
type announceWatcher struct {
	rb   *ebpf.Map
	prog *ebpf.Program
	lk   link.Link
	rd   *ringbuf.Reader
	done chan struct{}

	mu       sync.Mutex
	stopping bool
}

// System call numbers of prctl: x86-64, and i386 (a compat process's
// raw_syscalls:sys_enter id). A 64-bit process's call 172 (iopl) with
// the marker also matches; it is as harmless (EINVAL) and is resumed.
const (
	prctlNR64 = 157
	prctlNR32 = 172
)

// newAnnounceWatcher attaches the program; handle is called, in a
// goroutine of the watcher, with each announced (and stopped) process,
// which the watcher resumes once handle returns.
func newAnnounceWatcher(handle func(pid int)) (*announceWatcher, error) {
	rb, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 1 << 16})
	if err != nil {
		return nil, err
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, 8, asm.DWord), // id
		asm.JEq.Imm(asm.R2, prctlNR64, "check"),
		asm.JEq.Imm(asm.R2, prctlNR32, "check"),
		asm.Ja.Label("out"),
		asm.LoadMem(asm.R2, asm.R6, 16, asm.DWord).WithSymbol("check"), // args[0]
		asm.JNE.Imm(asm.R2, AnnounceOption, "out"),
		asm.LoadMem(asm.R2, asm.R6, 24, asm.DWord), // args[1]
		asm.JNE.Imm(asm.R2, AnnounceArg, "out"),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -8, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, rb.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -8),
		asm.Mov.Imm(asm.R3, 8),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		// Stopped only when user space will hear of it.
		asm.JNE.Imm(asm.R0, 0, "out"),
		asm.Mov.Imm(asm.R1, int32(unix.SIGSTOP)),
		asm.FnSendSignal.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.TracePoint, Instructions: insns, License: "GPL"})
	if err != nil {
		rb.Close()
		return nil, err
	}
	rd, err := ringbuf.NewReader(rb)
	if err != nil {
		prog.Close()
		rb.Close()
		return nil, err
	}
	lk, err := link.Tracepoint("raw_syscalls", "sys_enter", prog, nil)
	if err != nil {
		rd.Close()
		prog.Close()
		rb.Close()
		return nil, err
	}
	a := &announceWatcher{rb: rb, prog: prog, lk: lk, rd: rd, done: make(chan struct{})}
	go a.run(handle)
	return a, nil
}

func (a *announceWatcher) run(handle func(pid int)) {
	defer close(a.done)
	for {
		a.mu.Lock()
		stopping := a.stopping
		a.mu.Unlock()
		// Close sets stopping once the program is detached: what the
		// ring buffer holds then is all there will be, read to the end
		// (each process resumed) with a deadline already past.
		if stopping {
			a.rd.SetDeadline(time.Now())
		} else {
			a.rd.SetDeadline(time.Now().Add(100 * time.Millisecond))
		}
		rec, err := a.rd.Read()
		if err != nil {
			if stopping || errors.Is(err, ringbuf.ErrClosed) {
				return
			}
			continue
		}
		if len(rec.RawSample) < 8 {
			continue
		}
		pid := int(binary.LittleEndian.Uint64(rec.RawSample))
		if !stopping {
			handle(pid)
		}
		_ = unix.Kill(pid, unix.SIGCONT)
	}
}

// Close detaches the program, resumes the processes announced and not
// handled yet, and releases the kernel objects.
func (a *announceWatcher) Close() error {
	err := a.lk.Close()
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	<-a.done
	a.rd.Close()
	a.prog.Close()
	a.rb.Close()
	return err
}
