//go:build linux && amd64

package pid

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testprog"
	"github.com/dtrace-go/dtrace/symbol"
)

// objdumpStarts returns the instruction addresses objdump finds in
// [start, end) of file.
func objdumpStarts(t *testing.T, file string, start, end uint64) []uint64 {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn",
		"--start-address=0x"+strconv.FormatUint(start, 16), "--stop-address=0x"+strconv.FormatUint(end, 16), file).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var addrs []uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		colon := strings.IndexByte(l, ':')
		if colon < 0 || strings.Contains(l, "<") && strings.HasSuffix(l, ">:") {
			continue
		}
		a, err := strconv.ParseUint(l[:colon], 16, 64)
		if err != nil || a < start || a >= end {
			continue
		}
		if rest := strings.TrimSpace(l[colon+1:]); rest == "" || strings.HasPrefix(rest, "(bad)") {
			continue
		}
		addrs = append(addrs, a)
	}
	return addrs
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
		obj, err := symbol.OpenObject(file)
		if err != nil {
			t.Fatal(err)
		}
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
		// One objdump run over .text, split by function.
		all := objdumpStarts(t, file, text.Addr, text.Addr+text.Size)
		set := map[uint64]bool{}
		for _, a := range all {
			set[a] = true
		}
		checked, failed := 0, 0
		for _, fn := range obj.Funcs() {
			if fn.Size == 0 || fn.Value < text.Addr || fn.Value+fn.Size > text.Addr+text.Size {
				continue
			}
			body := code[fn.Value-text.Addr : fn.Value-text.Addr+fn.Size]
			offs, err := Instructions(body)
			checked++
			var want []uint64
			for a := fn.Value; a < fn.Value+fn.Size; a++ {
				if set[a] {
					want = append(want, a-fn.Value)
				}
			}
			if err != nil || !equal(offs, want) {
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

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
	obj, err := symbol.OpenObject(file)
	if err != nil {
		t.Fatal(err)
	}
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
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".text", file).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	rets := map[uint64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		colon := strings.IndexByte(l, ':')
		if colon < 0 {
			continue
		}
		a, err := strconv.ParseUint(l[:colon], 16, 64)
		if err != nil {
			continue
		}
		m := strings.Fields(l[colon+1:])
		if len(m) > 0 && (m[0] == "ret" || len(m) > 1 && (m[0] == "repz" || m[0] == "bnd") && m[1] == "ret") {
			rets[a] = true
		}
	}
	checked, found := 0, 0
	for _, fn := range obj.Funcs() {
		if fn.Size == 0 || fn.Value < text.Addr || fn.Value+fn.Size > text.Addr+text.Size {
			continue
		}
		body := code[fn.Value-text.Addr : fn.Value-text.Addr+fn.Size]
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
