//go:build linux

package pid_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/symbol"
)

// aggValue returns the single value a keyless aggregation printed.
func aggValue(t *testing.T, out string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return v
}

func TestEntryCountAndReturnSum(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	const n = 1000
	for _, tc := range []struct {
		clause string
		want   int64
	}{
		{"pid$target:work:work:entry { @ = count(); }", n},
		{"pid$target:work:work:return { @ = sum(arg1); }", testprog.Sum(n)},
		{"pid$target::work:entry { @ = sum(arg0); }", int64(n * (n - 1) / 2)},
		// arg0 is the offset of the returning instruction: work's ret at 4.
		{"pid$target:work:w*k:return /arg0 == 4/ { @ = count(); }", n},
		// The ret of work (at 4 with -O2), with the argument still in rdi.
		{"pid$target:work:work:4 { @ = sum(arg0); }", int64(n * (n - 1) / 2)},
	} {
		t.Run(tc.clause, func(t *testing.T) {
			p := testprog.Start(t, prog, strconv.Itoa(n))
			pv := tracetest.Named(pid.New(symbol.NewSymbolizer()), "pid"+strconv.Itoa(p.Pid()))
			out := tracetest.Trace(t, p.Pid(), tc.clause, func() { p.Release(t) }, pv)
			if got := aggValue(t, out); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			if got := strings.TrimSpace(p.Out.String()); got != strconv.FormatInt(testprog.Sum(n), 10) {
				t.Errorf("program printed %q", got)
			}
		})
	}
}

// TestPerfEvents runs the counting test on uprobe perf events, which
// kernels older than 6.6 (without uprobe_multi links) use.
func TestPerfEvents(t *testing.T) {
	if !pid.Multi() {
		t.Skip("perf events are the default on this kernel: the other tests use them")
	}
	defer pid.SetMulti(pid.SetMulti(false))
	TestEntryCountAndReturnSum(t)
}

// uprobeEventLines returns the lines of tracefs's uprobe_events that name
// this process's group (the one dtrace's uprobe events go in).
func uprobeEventLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range []string{"/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, fmt.Sprintf("p:dtrace_go_%d/", os.Getpid())) {
				out = append(out, l)
			}
		}
		return out
	}
	t.Skip("no tracefs")
	return nil
}

// TestSharedUprobeEvent runs probes over more sites than
// uprobeEventMin on perf events (kernels without uprobe_multi): they go
// in one tracefs uprobe event, the program finds each site's cookie by
// its address, and the event is gone once tracing stops.
func TestSharedUprobeEvent(t *testing.T) {
	if pid.Multi() {
		defer pid.SetMulti(pid.SetMulti(false))
	}
	prog := testprog.BuildWork(t, "-O2")
	const n = 1000
	ns := strconv.Itoa(n)
	for _, tc := range []struct {
		clause string
		want   []string
	}{
		// One program for the str* functions of libc and work: work
		// counted exactly, by its own cookie.
		{"pid$target:libc.so.6:str*:entry, pid$target:work:work:entry { @[probefunc] = count(); } END { printa(\"%s %@d\\n\", @); }",
			[]string{"work " + ns}},
		// Return sites: arg0 is the offset of work's ret (the cookie's
		// offset), arg1 its value.
		{"pid$target:libc.so.6:str*:return, pid$target:work:work:return /probefunc == \"work\"/ { @[arg0] = sum(arg1); } END { printa(\"%d %@d\\n\", @); }",
			[]string{"4 " + strconv.FormatInt(testprog.Sum(n), 10)}},
		// Entry and offset 0 are two programs on the same addresses,
		// both on shared events: each finds its own cookie.
		{"pid$target:libc.so.6:str*:entry, pid$target:libc.so.6:str*:0, pid$target:work:work:entry, pid$target:work:work:0 { @[probename, probefunc] = count(); } END { printa(\"%s %s %@d\\n\", @); }",
			[]string{"entry work " + ns, "0 work " + ns}},
	} {
		t.Run(tc.clause, func(t *testing.T) {
			p := testprog.Start(t, prog, ns)
			// dtrace's own pid provider, which shares programs.
			var during []string
			out := tracetest.Trace(t, p.Pid(), "#pragma D option quiet\n"+tc.clause, func() {
				during = uprobeEventLines(t)
				p.Release(t)
			})
			if len(during) < 32 {
				t.Errorf("%d probe points in this process's uprobe events while tracing, want 32 or more: %q", len(during), during)
			}
			if left := uprobeEventLines(t); len(left) > 0 {
				t.Errorf("uprobe events left after tracing: %q", left)
			}
			counts := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if i := strings.LastIndexByte(l, ' '); i > 0 {
					counts[strings.TrimSpace(l[:i])] = l[i+1:]
				}
			}
			for _, w := range tc.want {
				i := strings.LastIndexByte(w, ' ')
				if got, ok := counts[w[:i]]; !ok || got != w[i+1:] {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
		})
	}
}

func TestTenArgs(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	p := testprog.Start(t, prog, "3")
	pv := tracetest.Named(pid.New(nil), "pid"+strconv.Itoa(p.Pid()))
	out := tracetest.Trace(t, p.Pid(),
		`pid$target:work:args10:entry { printf("%d %d %d %d %d %d %d %d %d %d", arg0, arg1, arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9); }`,
		func() { p.Release(t) }, pv)
	if !strings.Contains(out, "0 1 2 3 4 5 6 7 8 9") {
		t.Errorf("output %q lacks the arguments 0..9", out)
	}
}

// TestProbes asks the provider directly, as the Registry does once it
// lets the provider resolve module aliases (a.out, libc).
func TestProbes(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	p := testprog.Start(t, prog, "1")
	pidStr := strconv.Itoa(p.Pid())
	pv := pid.New(nil)
	for _, tc := range []struct {
		desc provider.Desc
		want []string
	}{
		// work is "lea 0x1(%rdi,%rdi,2),%eax; ret": instructions at 0 and 4.
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work"},
			[]string{"pid" + pidStr + ":work:work:entry", "pid" + pidStr + ":work:work:return",
				"pid" + pidStr + ":work:work:0", "pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work", Name: "[0-9]"},
			[]string{"pid" + pidStr + ":work:work:0", "pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "a.out", Function: "work", Name: "4"},
			[]string{"pid" + pidStr + ":work:work:4"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "libc", Function: "mallo?", Name: "entry"},
			[]string{"pid" + pidStr + ":libc.so.6:malloc:entry"}},
		{provider.Desc{Provider: "pid" + pidStr, Module: "libc.so.6", Function: "malloc", Name: "return"},
			[]string{"pid" + pidStr + ":libc.so.6:malloc:return"}},
		{provider.Desc{Provider: "pid*", Function: "work"}, nil},
	} {
		probes, err := pv.Probes(tc.desc)
		if err != nil {
			t.Errorf("%s: %v", tc.desc, err)
			continue
		}
		got := provider.Names(probes)
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %q, want %q", tc.desc, got, tc.want)
		}
	}
	for _, tc := range []struct {
		desc     provider.Desc
		tag, msg string
	}{
		{provider.Desc{Function: "work", Name: "bogus"}, "D_PROC_NAME", "'bogus' is an invalid probe name"},
		{provider.Desc{Function: "work", Name: "1"}, "D_PROC_CREATEFAIL", "failed to create probe at 'work+0x1': not an instruction boundary"},
		{provider.Desc{Function: "work", Name: "100000"}, "D_PROC_OFF", "offset 0x100000 outside of function 'work'"},
		{provider.Desc{Module: "a.out", Function: "ahl_r00lz", Name: "entry"}, "D_PROC_FUNC", "failed to lookup 'ahl_r00lz' in module 'a.out'"},
		{provider.Desc{Module: "libc", Function: "-", Name: "800"}, "D_PROC_LIB", "only the a.out module is valid with the '-' function"},
		{provider.Desc{Function: "-", Name: "10*"}, "D_PROC_NAME", "only individual addresses may be specified with the '-' function"},
		{provider.Desc{Provider: "pid0"}, "D_PROC_BADPID", "pid0 does not contain a valid pid"},
		{provider.Desc{Provider: "pid4194303"}, "D_PROC_GRAB", "failed to grab process 4194303"},
	} {
		if tc.desc.Provider == "" {
			tc.desc.Provider = "pid" + pidStr
		}
		_, err := pv.Probes(tc.desc)
		var perr *pid.Error
		if !errors.As(err, &perr) || perr.Tag != tc.tag || perr.Msg != tc.msg {
			t.Errorf("%s: error %v, want [%s] %s", tc.desc, err, tc.tag, tc.msg)
		}
	}
	// An absolute address: work's own, as pid$target::-:ADDR names it.
	proc, err := symbol.ReadProcess(p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	var addr uint64
	for _, mod := range proc.Modules() {
		if mod.IsExe {
			obj, _ := symbol.LoadObject(proc.OpenPath(mod))
			bias, _ := proc.Bias(mod, obj)
			v, _ := obj.SymbolValue("work")
			addr = v + bias
		}
	}
	name := strconv.FormatUint(addr, 16)
	probes, err := pv.Probes(provider.Desc{Provider: "pid" + pidStr, Function: "-", Name: name})
	if err != nil || len(probes) != 1 || probes[0].String() != "pid"+pidStr+":work:-:"+name {
		t.Errorf("pid%s::-:%s: %v %v", pidStr, name, probes, err)
	}
}

// TestLibraryBeforeLoad probes a libc function of a process that has not
// loaded libc yet.
func TestLibraryBeforeLoad(t *testing.T) {
	prog := testprog.BuildWork(t, "-O0")
	p, detach := testprog.StartStopped(t, prog, "5")
	if proc, err := symbol.ReadProcess(p.Pid()); err != nil {
		t.Fatal(err)
	} else {
		for _, m := range proc.Modules() {
			if m.Name == "libc.so.6" {
				t.Fatal("libc is mapped already: the test tests nothing")
			}
		}
	}
	pv := tracetest.Named(pid.New(nil), "pid"+strconv.Itoa(p.Pid()))
	out := tracetest.Trace(t, p.Pid(), "pid$target:libc.so.6:atoi:entry { @ = count(); }", func() {
		detach()
		p.Release(t)
	}, pv)
	if got := aggValue(t, out); got != 1 {
		t.Errorf("atoi called %d times, want 1", got)
	}
}

// funcCode returns the bytes of a function of the executable at path.
func funcCode(t *testing.T, path, name string) []byte {
	t.Helper()
	obj, err := symbol.LoadObject(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range obj.Funcs() {
		if f.Name == name {
			code, err := obj.Code(f)
			if err != nil {
				t.Fatal(err)
			}
			return code
		}
	}
	t.Fatalf("%s: no function %s", path, name)
	return nil
}

// offsetCounts parses the output of @[arg0] = count(): offset -> count.
func offsetCounts(t *testing.T, out string) map[uint64]int64 {
	t.Helper()
	m := map[uint64]int64{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("output line %q", l)
		}
		off, err1 := strconv.ParseUint(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("output line %q", l)
		}
		m[off] = n
	}
	return m
}

// TestReturnOffsets checks that a return probe fires on the instruction
// that leaves the function, with its offset as arg0 and the return value
// as arg1: threeways returns by ret, rep ret and ret $0 (one call in
// three each), tailer by a tail call (jmp plus3).
func TestReturnOffsets(t *testing.T) {
	prog := testprog.Build(t, "rets", []string{"rets.c"}, "-O2")
	const n = 300
	var wantThree, wantTail, wantCond int64
	for i := int64(0); i < n; i++ {
		wantThree += [3]int64{i, 2 * i, i + 100}[i%3]
		wantTail += i + 4
		wantCond += [2]int64{i + 5, i + 3}[i%2]
		wantCond += i + 5 - 2*int64(btoi(i < 100)) + i + 5 - 2*int64(btoi(i > 200))
	}
	run := func(clause string) string {
		p := testprog.Start(t, prog, strconv.Itoa(n))
		pv := tracetest.Named(pid.New(nil), "pid"+strconv.Itoa(p.Pid()))
		out := tracetest.Trace(t, p.Pid(), clause, func() { p.Release(t) }, pv)
		if got := strings.TrimSpace(p.Out.String()); got != strconv.FormatInt(wantThree+wantTail+wantCond, 10) {
			t.Errorf("program printed %q", got)
		}
		return out
	}

	code := funcCode(t, prog, "threeways")
	offs := offsetCounts(t, run("pid$target:rets:threeways:return { @[arg0] = count(); }"))
	if len(offs) != 3 {
		t.Errorf("threeways returned from %d places (%v), want 3", len(offs), offs)
	}
	for off, cnt := range offs {
		switch {
		case off >= uint64(len(code)):
			t.Errorf("offset %#x is past threeways (%d bytes)", off, len(code))
		case code[off] != 0xc3 && code[off] != 0xc2 && !(code[off] == 0xf3 && off+1 < uint64(len(code)) && code[off+1] == 0xc3):
			t.Errorf("offset %#x of threeways holds %x, not a ret", off, code[off])
		case cnt != n/3:
			t.Errorf("offset %#x: %d returns, want %d", off, cnt, n/3)
		}
	}
	if got := aggValue(t, run("pid$target:rets:threeways:return { @ = sum(arg1); }")); got != wantThree {
		t.Errorf("sum(arg1) = %d, want %d", got, wantThree)
	}

	// The tail call: the probe fires on the jmp out of tailer, once a call.
	code = funcCode(t, prog, "tailer")
	offs = offsetCounts(t, run("pid$target:rets:tailer:return { @[arg0] = count(); }"))
	for off, cnt := range offs {
		if off >= uint64(len(code)) || code[off] != 0xe9 && code[off] != 0xeb || cnt != n {
			t.Errorf("tailer returned at %#x (%d times); want its jmp, %d times", off, cnt, n)
		}
	}
	if len(offs) != 1 {
		t.Errorf("tailer returned from %v, want one jmp", offs)
	}

	// The conditional tail calls: the probe on the jump fires only when it
	// is taken, the ret's otherwise, once a call in all.
	for _, tc := range []struct {
		fn          string
		jump        byte // the opcode byte after any 0f
		taken, rets int64
	}{
		{"condtail", 0x75, n / 2, n / 2},
		{"condlt", 0x8c, 100, n - 100},
		{"condabove", 0x87, n - 201, 201},
	} {
		code = funcCode(t, prog, tc.fn)
		offs = offsetCounts(t, run("pid$target:rets:"+tc.fn+":return { @[arg0] = count(); }"))
		if len(offs) != 2 {
			t.Errorf("%s returned from %v, want its jump and its ret", tc.fn, offs)
		}
		for off, cnt := range offs {
			switch {
			case off >= uint64(len(code)):
				t.Errorf("%s returned at %#x, past its end", tc.fn, off)
			case code[off] == 0xc3:
				if cnt != tc.rets {
					t.Errorf("%s returned by its ret %d times, want %d", tc.fn, cnt, tc.rets)
				}
			case code[off] == tc.jump || code[off] == 0x0f && code[off+1] == tc.jump:
				if cnt != tc.taken {
					t.Errorf("%s returned by its jump %d times, want %d", tc.fn, cnt, tc.taken)
				}
			default:
				t.Errorf("%s returned at %#x (%x), neither its jump nor its ret", tc.fn, off, code[off])
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestUsymOtherProcess resolves ufunc(), usym(), umod(), uaddr() and %A
// in a process that is not $target (there is none): their records and
// aggregation keys carry the pid they belong to.
func TestUsymOtherProcess(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	p := testprog.Start(t, prog, "5")
	prov := "pid" + strconv.Itoa(p.Pid())
	// The library's own pid provider: it snapshots the process for the
	// library's symbolizer, which resolves the addresses after it exits.
	out := tracetest.Trace(t, 0, prov+`:work:work:entry /arg0 == 2/ {
		trace(usym(uregs[R_PC])); trace(umod(uregs[R_PC])); trace(uaddr(uregs[R_PC] + 1));
		printf("[%A]", uaddr(uregs[R_PC]));
	}
	`+prov+`:work:work:entry { @f[ufunc(uregs[R_PC])] = count(); @m[umod(uregs[R_PC])] = count(); @a[uaddr(uregs[R_PC])] = count(); }`,
		func() { p.Release(t) })
	for _, want := range []string{"work`work ", " work ", "work`work+0x1", "[work`work]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The aggregations: one key each, symbolized, counted 5 times.
	keys := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && f[1] == "5" {
			keys++
			if f[0] != "work`work" && f[0] != "work" {
				t.Errorf("aggregation key %q, want work`work or work", f[0])
			}
		}
	}
	if keys != 3 {
		t.Errorf("%d aggregation keys counted 5 times, want 3:\n%s", keys, out)
	}
}

// TestGlobSkipsUnprobeable enables every instruction of _start, which
// ends in hlt, an instruction the kernel refuses to probe: the probes a
// glob made are left out there instead of failing the enabling, while
// naming that offset exactly fails.
func TestGlobSkipsUnprobeable(t *testing.T) {
	prog := testprog.BuildWork(t, "-O2")
	code := funcCode(t, prog, "_start")
	offs, err := pid.Instructions(code)
	if err != nil {
		t.Fatal(err)
	}
	hlt := -1
	for _, o := range offs {
		if code[o] == 0xf4 {
			hlt = int(o)
		}
	}
	if hlt < 0 {
		t.Fatal("_start has no hlt: the test tests nothing")
	}
	p := testprog.Start(t, prog, "5")
	out := tracetest.Trace(t, p.Pid(), "pid$target:work:_start: { @ = count(); } pid$target:work:work:entry { @ = count(); }",
		func() { p.Release(t) })
	if got := aggValue(t, out); got != 5 {
		t.Errorf("count %d, want 5 (work's entries; _start ran before tracing)", got)
	}

	p = testprog.Start(t, prog, "5")
	h := tracetest.Compile(t, p.Pid(), fmt.Sprintf("pid$target:work:_start:%x {}", hlt))
	if err := h.Go(); err == nil {
		t.Errorf("a probe on _start's hlt was enabled")
		h.Stop()
	}
	p.Release(t)

	// A glob in the function field passes over a function whose entry
	// cannot be probed (libc's __nptl_free_tcb starts lock-prefixed),
	// while naming that function exactly fails.
	prog = testprog.BuildSource(t, "hltentry", hltEntrySource, "-O2")
	p = testprog.Start(t, prog, "5")
	out = tracetest.Trace(t, p.Pid(), `pid$target:hltentry::entry /probefunc == "work"/ { @ = count(); }`, func() { p.Release(t) })
	if got := aggValue(t, out); got != 5 {
		t.Errorf("count %d, want 5 (work's entries)", got)
	}
	p = testprog.Start(t, prog, "5")
	h = tracetest.Compile(t, p.Pid(), "pid$target:hltentry:unprobeable:entry {}")
	if err := h.Go(); err == nil {
		t.Errorf("a probe on unprobeable's hlt was enabled")
		h.Stop()
	}
	p.Release(t)
}

// hltEntrySource has a function whose first instruction, hlt, the kernel
// will not probe; main waits for a line on standard input (for Release),
// then calls work as many times as its argument says.
const hltEntrySource = `#include <stdio.h>
#include <stdlib.h>
__attribute__((naked, noinline, used)) void unprobeable(void) { __asm__("hlt"); }
__attribute__((noinline)) int work(int i) { __asm__ volatile(""); return i * 2; }
int main(int argc, char **argv) {
	char line[16];
	int n = atoi(argv[1]), s = 0;
	fgets(line, sizeof line, stdin);
	for (int i = 0; i < n; i++)
		s += work(i);
	return s == -1;
}
`

// TestMisemulatedLeftOut probes a function whose first instruction is
// VEX-encoded with an opcode byte the kernel's uprobes take for a jcc
// (vpcmpeqb, c5 fd 74): the kernel would emulate it as a jump and never
// run it. A glob leaves that site out, so the program still computes what
// it computes untraced; naming it exactly fails.
func TestMisemulatedLeftOut(t *testing.T) {
	if cpu, err := os.ReadFile("/proc/cpuinfo"); err != nil || !bytes.Contains(cpu, []byte(" avx2")) {
		t.Skip("no AVX2 here")
	}
	prog := testprog.BuildSource(t, "vexentry", vexEntrySource, "-O2", "-mavx2")
	if code := funcCode(t, prog, "veq"); !pid.Misemulated(code) {
		t.Fatalf("veq starts % x, not an instruction Misemulated knows", code[:min(len(code), 6)])
	}
	p := testprog.Start(t, prog, "5")
	out := tracetest.Trace(t, p.Pid(), `pid$target:vexentry:veq: { @ = count(); }`, func() { p.Release(t) })
	if got := strings.TrimSpace(p.Out.String()); got != "ffffffff" {
		t.Errorf("traced veq returned %s, want ffffffff (its first instruction was not run)", got)
	}
	// veq's vpmovmskb (c5 fd d7) is single-stepped: its probes fire.
	if got := aggValue(t, out); got < 5 {
		t.Errorf("count %d, want at least 5 (veq's other instructions)", got)
	}
	p = testprog.Start(t, prog, "5")
	pv := pid.New(symbol.NewSymbolizer())
	d := provider.Desc{Provider: fmt.Sprintf("pid%d", p.Pid()), Module: "vexentry", Function: "veq", Name: "entry"}
	if ps, err := pv.Probes(d); err == nil {
		t.Errorf("%s made %d probes on veq's vpcmpeqb, want an error", d, len(ps))
	}
	p.Release(t)
}

// vexEntrySource has veq, whose first instruction is vpcmpeqb; main waits
// for a line on standard input (for Release), calls veq as many times as
// its argument says and prints what it returned.
const vexEntrySource = `#include <stdio.h>
#include <stdlib.h>
__attribute__((naked, noinline, used)) unsigned veq(void) {
	__asm__("vpcmpeqb %ymm0,%ymm0,%ymm3\n\tvpmovmskb %ymm3,%eax\n\tvzeroupper\n\tret");
}
int main(int argc, char **argv) {
	char line[16];
	int n = atoi(argv[1]);
	unsigned r = 0;
	fgets(line, sizeof line, stdin);
	__asm__ volatile("vpxor %ymm3,%ymm3,%ymm3");
	for (int i = 0; i < n; i++)
		r |= veq();
	printf("%x\n", r);
	return 0;
}
`
