//go:build linux && amd64

package pid

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// objdumpInsn is one instruction line of objdump -d: its address and
// what follows the colon (the mnemonic and operands).
type objdumpInsn struct {
	addr uint64
	text string
}

// objdump disassembles file with objdump -d --no-show-raw-insn and the
// extra args, and returns its instruction lines.
func objdump(t *testing.T, file string, args ...string) []objdumpInsn {
	t.Helper()
	args = append(append([]string{"-d", "--no-show-raw-insn"}, args...), file)
	out, err := exec.Command("objdump", args...).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var insns []objdumpInsn
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		colon := strings.IndexByte(l, ':')
		if colon < 0 || strings.Contains(l, "<") && strings.HasSuffix(l, ">:") {
			continue
		}
		if a, err := strconv.ParseUint(l[:colon], 16, 64); err == nil {
			insns = append(insns, objdumpInsn{a, strings.TrimSpace(l[colon+1:])})
		}
	}
	return insns
}

// objdumpStarts returns the instruction addresses objdump finds in
// [start, end) of file.
func objdumpStarts(t *testing.T, file string, start, end uint64) []uint64 {
	t.Helper()
	var addrs []uint64
	for _, in := range objdump(t, file, "--start-address=0x"+strconv.FormatUint(start, 16), "--stop-address=0x"+strconv.FormatUint(end, 16)) {
		if in.addr < start || in.addr >= end || in.text == "" || strings.HasPrefix(in.text, "(bad)") {
			continue
		}
		addrs = append(addrs, in.addr)
	}
	return addrs
}

// textFunc is a function of an object's .text with its code.
type textFunc struct {
	symbol.Func
	body []byte
}

// textFuncs returns the functions (with a size) that lie in file's .text,
// and the bounds of .text.
func textFuncs(t *testing.T, file string) (funcs []textFunc, start, end uint64) {
	t.Helper()
	obj := testprog.OpenObject(t, file)
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section(".text")
	code, err := text.Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	start, end = text.Addr, text.Addr+text.Size
	for _, fn := range obj.Funcs() {
		if fn.Size == 0 || fn.Value < start || fn.Value+fn.Size > end {
			continue
		}
		funcs = append(funcs, textFunc{fn, code[fn.Value-start : fn.Value-start+fn.Size]})
	}
	return funcs, start, end
}

// TestInstructionsMatchObjdump decodes every function of libc and of a
// test program and compares the instruction boundaries with objdump's.
func TestInstructionsMatchObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Fatal("objdump (binutils) is needed as the oracle")
	}
	files := []string{testprog.BuildWork(t, "-O2"), "/usr/lib/x86_64-linux-gnu/libc.so.6",
		"/usr/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/postgresql/15/bin/postgres"}
	for _, file := range files {
		funcs, start, end := textFuncs(t, file)
		// One objdump run over .text, split by function.
		all := objdumpStarts(t, file, start, end)
		set := map[uint64]bool{}
		for _, a := range all {
			set[a] = true
		}
		checked, failed := 0, 0
		for _, fn := range funcs {
			body := fn.body
			offs, err := Instructions(body)
			checked++
			var want []uint64
			for a := fn.Value; a < fn.Value+fn.Size; a++ {
				if set[a] {
					want = append(want, a-fn.Value)
				}
			}
			if err != nil || !slices.Equal(offs, want) {
				failed++
				if failed <= 5 {
					bad := firstDiff(offs, want)
					t.Errorf("%s: %s: %v; differs at offset %#x (byte %x)", file, fn.Name, err, bad, body[min(int(bad), len(body)-1):min(int(bad)+8, len(body))])
				}
			}
		}
		t.Logf("%s: %d functions, %d differ", file, checked, failed)
	}
}

func firstDiff(a, b []uint64) uint64 {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			if i > 0 {
				return a[i-1]
			}
			return 0
		}
	}
	if len(b) > len(a) && len(a) > 0 {
		return a[len(a)-1]
	}
	return 0
}

// TestReturnsMatchObjdump compares the ret instructions Returns finds in
// every function of libc with the ones objdump shows (ret, repz ret, bnd
// ret, ret $imm), and checks that its tail calls are jmps out of the
// function.
func TestReturnsMatchObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Fatal("objdump (binutils) is needed as the oracle")
	}
	const file = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	funcs, _, _ := textFuncs(t, file)
	rets := map[uint64]bool{}
	for _, in := range objdump(t, file, "-j", ".text") {
		m := strings.Fields(in.text)
		if len(m) > 0 && (m[0] == "ret" || len(m) > 1 && (m[0] == "repz" || m[0] == "bnd") && m[1] == "ret") {
			rets[in.addr] = true
		}
	}
	checked, found := 0, 0
	for _, fn := range funcs {
		body := fn.body
		exits, err := Returns(body)
		if err != nil {
			continue // Instructions' test reports decoding failures
		}
		checked++
		got := map[uint64]bool{}
		for _, e := range exits {
			o := e.Off
			if rets[fn.Value+o] {
				got[o] = true
				found++
				if e.Cond != 0 {
					t.Errorf("%s+%#x: a ret with a condition", fn.Name, o)
				}
				continue
			}
			b := body[o]
			jcc := b >= 0x70 && b <= 0x7f || b == 0x0f && o+1 < uint64(len(body)) && body[o+1]&0xf0 == 0x80
			if b != 0xe9 && b != 0xeb && !jcc || jcc != (e.Cond != 0) {
				t.Errorf("%s+%#x: a return that is neither a ret nor a jump (%x, cond %d)", fn.Name, o, body[o:min(int(o)+4, len(body))], e.Cond)
			}
		}
		for a := fn.Value; a < fn.Value+fn.Size; a++ {
			if rets[a] && !got[a-fn.Value] {
				t.Errorf("%s+%#x: objdump's ret missed", fn.Name, a-fn.Value)
			}
		}
	}
	if checked < 1000 || found < 1000 {
		t.Errorf("only %d functions, %d rets checked", checked, found)
	}
	t.Logf("%d functions, %d rets", checked, found)
}

func TestRefusedPrefix(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0xf0, 0x83, 0x04, 0x24, 0x00}, true}, // lock addl $0,(%rsp): SetLatch's first
		{[]byte{0x66, 0xf0, 0x0f, 0xb1, 0x17}, true}, // lock cmpxchg behind an operand-size prefix
		{[]byte{0x3e, 0xff, 0xe0}, true},             // notrack jmp *%rax
		{[]byte{0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, true},
		{[]byte{0x66, 0x90}, false},
		{[]byte{0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}, false}, // mov %fs:0x28,%rax
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa}, false},                      // endbr64
		{[]byte{0x55}, false},
		{nil, false},
	} {
		if got := RefusedPrefix(tc.code); got != tc.want {
			t.Errorf("RefusedPrefix(% x) = %v, want %v", tc.code, got, tc.want)
		}
	}
}
