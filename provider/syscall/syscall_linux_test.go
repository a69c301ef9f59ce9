package syscall_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/perf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	dtraceprov "github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/syscall"
)

const (
	outOff  = 256 // Layout.Output of the test spec
	recSize = 56  // epid, specid, prid, arg0, arg1, arg2, errno, pid
)

// recordClause is a hand-written clause that sends {epid, specid, prid,
// arg0, arg1, arg2, errno} to dt_buf when the firing process is pid.
func recordClause(sym string, pid int) asm.Instructions {
	skip := sym + "_skip"
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1).WithSymbol(sym),
		asm.Mov.Reg(asm.R7, asm.R2),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(pid), skip),
		asm.LoadMem(asm.R0, asm.R7, abi.MStateEPID, asm.Word),
		asm.StoreMem(asm.R7, outOff, asm.R0, asm.Word),
		asm.StoreImm(asm.R7, outOff+4, 0, asm.Word),
		asm.LoadMem(asm.R0, asm.R7, abi.MStatePrid, asm.Word),
		asm.StoreMem(asm.R7, outOff+8, asm.R0, asm.DWord),
	}
	for i, off := range []int16{0, 8, 16, abi.MStateErrno} {
		insns = append(insns,
			asm.LoadMem(asm.R0, asm.R7, off, asm.DWord),
			asm.StoreMem(asm.R7, outOff+16+int16(8*i), asm.R0, asm.DWord))
	}
	return append(insns,
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.LoadMapPtr(asm.R2, 0).WithReference("dt_buf"),
		asm.LoadImm(asm.R3, 0xffffffff, asm.DWord),
		asm.Mov.Reg(asm.R4, asm.R7),
		asm.Add.Imm(asm.R4, outOff),
		asm.Mov.Imm(asm.R5, recSize-8),
		asm.FnPerfEventOutput.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol(skip),
		asm.Return(),
	)
}

type record struct {
	epid, prid             uint32
	arg0, arg1, arg2, errn uint64
}

// The workload: waits for a byte on stdin, then calls getppid() argv[1]
// times, writes 5 bytes to /dev/null and 1 byte to a bad descriptor.
const workload = `
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv) {
	int i, n = atoi(argv[1]), fd;
	char c;

	if (read(0, &c, 1) != 1)
		return 1;
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	fd = open("/dev/null", O_WRONLY);
	write(fd, "hello", 5);
	write(-1, "x", 1);
	return 0;
}
`

func buildWorkload(t *testing.T) string {
	return testprog.BuildSource(t, "w", workload, "-O0")
}

func TestProbes(t *testing.T) {
	pv := syscall.New()
	reg := provider.NewRegistry(dtraceprov.New(), pv)
	match := func(s string) []*provider.Probe {
		t.Helper()
		ps, err := reg.MatchString(s)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	got := match("syscall::read:")
	if len(got) != 2 || got[0].String() != "syscall:vmlinux:read:entry" || got[1].String() != "syscall:vmlinux:read:return" {
		t.Fatalf("syscall::read: = %v", got)
	}
	if l := provider.ListLine(got[0]); !strings.HasSuffix(l, "   syscall           vmlinux                              read entry") {
		t.Errorf("list line %q", l)
	}
	all := match("syscall:::")
	entries := match("syscall:::entry")
	if len(all) < 600 || len(entries)*2 != len(all) {
		t.Errorf("%d probes, %d entries", len(all), len(entries))
	}
	for _, s := range []string{"syscall::?exit?:entry", "syscall::read:exit", "syscall:kernel::", "syscall::fight:"} {
		if ps := match(s); len(ps) != 0 {
			t.Errorf("%s matched %v", s, ps)
		}
	}
	tests := []struct {
		probe string
		types []string
	}{
		{"syscall::write:entry", []string{"unsigned int", "const char *", "size_t"}},
		{"syscall::write:return", []string{"long", "long"}},
		{"syscall::getppid:entry", []string{}},
		{"syscall::mmap:entry", []string{"unsigned long", "unsigned long", "unsigned long", "unsigned long", "unsigned long", "unsigned long"}},
	}
	for _, tt := range tests {
		ps := match(tt.probe)
		if len(ps) != 1 {
			t.Fatalf("%s matched %v", tt.probe, ps)
		}
		types, err := pv.ArgTypes(ps[0])
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(types) != fmt.Sprint(tt.types) {
			t.Errorf("%s args = %q, want %q", tt.probe, types, tt.types)
		}
	}
}

// TestFire counts getppid() entries and returns of a real process and
// checks write()'s arguments, return values and errno, with probes on
// their own tracepoints and with wide probes on the raw ones.
func TestFire(t *testing.T) {
	exe := buildWorkload(t)
	t.Run("narrow", func(t *testing.T) {
		fire(t, exe, false, "syscall::getppid:entry", "syscall::getppid:return", "syscall::write:entry", "syscall::write:return")
	})
	t.Run("wide", func(t *testing.T) {
		fire(t, exe, true, "syscall:::entry", "syscall:::return")
	})
}

func fire(t *testing.T, exe string, wide bool, probes ...string) {
	const n = 1000
	cmd := exec.Command(exe, fmt.Sprint(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	pid := cmd.Process.Pid

	var clauses []*program.ClauseSpec
	for i, p := range probes {
		sym := fmt.Sprintf("dt_clause_%d", i)
		clauses = append(clauses, &program.ClauseSpec{Index: i, Symbol: sym, Probes: []string{p}, EPID: uint32(i + 1), Insns: recordClause(sym, pid), ReadsArgs: true})
	}
	spec := &program.Spec{
		Maps: []program.MapSpec{
			{Name: "dt_buf", Kind: program.MapPerfEventArray},
			{Name: "dt_scratch", Kind: program.MapArray, KeySize: 4, ValueSize: 512},
			{Name: "dt_state", Kind: program.MapArray, KeySize: 4, ValueSize: 8, MaxEntries: 1},
		},
		Clauses: clauses,
		Layout:  program.ScratchLayout{Size: 512, MState: 0, Output: outOff},
	}
	pv := syscall.New()
	reg := provider.NewRegistry(dtraceprov.New(), pv)
	objs, plan := tracetest.Load(t, spec, reg)
	for _, pp := range plan.Probes {
		if got := pv.Program(pp.Probe).Type == ebpf.RawTracepoint; got != wide {
			t.Fatalf("probe %s: raw tracepoint %v, want %v", pp.Probe, got, wide)
		}
	}
	rd, err := perf.NewReader(objs.Map("dt_buf"), 64*os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	// Clauses run only while ACTIVE.
	var state [8]byte
	binary.LittleEndian.PutUint32(state[:], abi.ActivityActive)
	if err := objs.Map("dt_state").Put(uint32(0), state); err != nil {
		t.Fatal(err)
	}
	if err := objs.Attach(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "g"); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("workload: %v", err)
	}

	byProbe := map[string][]record{}
	lost := uint64(0)
	for _, r := range tracetest.ReadRecords(t, rd, 300*time.Millisecond) {
		lost += r.LostSamples
		s := r.RawSample
		if len(s) < recSize-8 {
			continue
		}
		le := binary.LittleEndian
		rec := record{epid: le.Uint32(s), prid: uint32(le.Uint64(s[8:])),
			arg0: le.Uint64(s[16:]), arg1: le.Uint64(s[24:]), arg2: le.Uint64(s[32:]), errn: le.Uint64(s[40:])}
		p := reg.Probe(rec.prid)
		if p == nil {
			t.Fatalf("record of unknown probe %d", rec.prid)
		}
		byProbe[p.Function+":"+p.Name] = append(byProbe[p.Function+":"+p.Name], rec)
	}
	if lost != 0 {
		t.Fatalf("%d records lost", lost)
	}
	if got := len(byProbe["getppid:entry"]); got != n {
		t.Errorf("getppid entries = %d, want %d", got, n)
	}
	if got := len(byProbe["getppid:return"]); got != n {
		t.Errorf("getppid returns = %d, want %d", got, n)
	}
	ppid := uint64(os.Getpid())
	for _, r := range byProbe["getppid:return"] {
		if r.arg0 != ppid || r.arg1 != ppid || r.errn != 0 {
			t.Fatalf("getppid return %+v, want arg0 = arg1 = %d, errno 0", r, ppid)
		}
	}
	// write(fd, "hello", 5) = 5; write(-1, "x", 1) = -EBADF.
	w := byProbe["write:entry"]
	if len(w) != 2 || w[0].arg0 < 3 || w[0].arg2 != 5 || w[0].arg1 == 0 || w[1].arg0 != 0xffffffff || w[1].arg2 != 1 {
		t.Errorf("write entries = %+v", w)
	}
	ret := byProbe["write:return"]
	ebadf := uint64(unix.EBADF)
	if len(ret) != 2 || ret[0].arg0 != 5 || ret[0].arg1 != 5 || ret[0].errn != 0 ||
		int64(ret[1].arg0) != -int64(ebadf) || int64(ret[1].arg1) != -int64(ebadf) || ret[1].errn != ebadf {
		t.Errorf("write returns = %+v", ret)
	}
	if wide {
		// The workload opened /dev/null: openat's arguments and result.
		o := byProbe["openat:entry"]
		or := byProbe["openat:return"]
		if len(o) == 0 || len(or) != len(o) || int32(o[len(o)-1].arg0) != unix.AT_FDCWD || or[len(or)-1].arg0 != w[0].arg0 {
			t.Errorf("openat entries %+v, returns %+v", o, or)
		}
	}
}
