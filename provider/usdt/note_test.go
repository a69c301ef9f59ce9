package usdt

import (
	"debug/elf"
	"encoding/binary"
	"reflect"
	"testing"
)

func TestParseArg(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Arg
		err  bool
	}{
		{in: "-4@%eax", want: Arg{Kind: ArgReg, Size: 4, Signed: true, Reg: "rax"}},
		{in: "8@%rdi", want: Arg{Kind: ArgReg, Size: 8, Reg: "rdi"}},
		{in: "1@%ah", want: Arg{Kind: ArgReg, Size: 1, Reg: "rax", Shift: 8}},
		{in: "-1@%bl", want: Arg{Kind: ArgReg, Size: 1, Signed: true, Reg: "rbx"}},
		{in: "2@%si", want: Arg{Kind: ArgReg, Size: 2, Reg: "rsi"}},
		{in: "1@%dil", want: Arg{Kind: ArgReg, Size: 1, Reg: "rdi"}},
		{in: "-4@%r12d", want: Arg{Kind: ArgReg, Size: 4, Signed: true, Reg: "r12"}},
		{in: "2@%r9w", want: Arg{Kind: ArgReg, Size: 2, Reg: "r9"}},
		{in: "1@%r15b", want: Arg{Kind: ArgReg, Size: 1, Reg: "r15"}},
		{in: "8@%eax", want: Arg{Kind: ArgReg, Size: 4, Reg: "rax"}},
		{in: "%rsi", want: Arg{Kind: ArgReg, Size: 8, Reg: "rsi"}},
		{in: "4@$5", want: Arg{Kind: ArgConst, Size: 4, Value: 5}},
		{in: "-4@$-3", want: Arg{Kind: ArgConst, Size: 4, Signed: true, Value: -3}},
		{in: "8@$0x10", want: Arg{Kind: ArgConst, Size: 8, Value: 16}},
		{in: "8@-16(%rbp)", want: Arg{Kind: ArgMem, Size: 8, Reg: "rbp", Disp: -16}},
		{in: "-4@(%rax)", want: Arg{Kind: ArgMem, Size: 4, Signed: true, Reg: "rax"}},
		{in: "8@8(%rax,%rdx,8)", want: Arg{Kind: ArgMem, Size: 8, Reg: "rax", Disp: 8, Index: "rdx", Scale: 8}},
		{in: "-4@limit(%rip)", want: Arg{Kind: ArgMem, Size: 4, Signed: true, Reg: "rip", Sym: "limit"}},
		{in: "8@buf+16(%rip)", want: Arg{Kind: ArgMem, Size: 8, Reg: "rip", Sym: "buf", Disp: 16}},
		{in: "3@%eax", err: true},
		{in: "4@%xyz", err: true},
		{in: "4@16", err: true},
		// i386 (gcc -m32): 32-bit base and index registers.
		{in: "4@-12(%ebp)", want: Arg{Kind: ArgMem, Size: 4, Reg: "rbp", Disp: -12, Addr32: true}},
		{in: "4@(%ebx,%ecx,4)", want: Arg{Kind: ArgMem, Size: 4, Reg: "rbx", Index: "rcx", Scale: 4, Addr32: true}},
		{in: "4@(%rbx,%ecx,4)", err: true},
		{in: "4@8(%ax)", err: true},
	} {
		got, err := ParseArg(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("ParseArg(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseArg(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseNote(t *testing.T) {
	desc := make([]byte, 24)
	binary.LittleEndian.PutUint64(desc, 0x1234)
	binary.LittleEndian.PutUint64(desc[8:], 0x2000)
	binary.LittleEndian.PutUint64(desc[16:], 0x4028)
	desc = append(desc, "postgresql\x00query__start\x008@%rbx -4@$1\x00"...)
	n, err := ParseNote(desc)
	if err != nil {
		t.Fatal(err)
	}
	if n.PC != 0x1234 || n.Base != 0x2000 || n.Semaphore != 0x4028 || n.Provider != "postgresql" || n.Name != "query__start" || len(n.Args) != 2 || n.ArgError != nil {
		t.Errorf("ParseNote = %+v", n)
	}
	if ProbeName(n.Name) != "query-start" {
		t.Errorf("ProbeName(%q) = %q", n.Name, ProbeName(n.Name))
	}
	if _, err := ParseNote(desc[:20]); err == nil {
		t.Error("short note: no error")
	}
}

func TestExtend(t *testing.T) {
	for _, tc := range []struct {
		v      int64
		size   int
		signed bool
		want   int64
	}{
		{-1, 4, false, 0xffffffff},
		{-1, 4, true, -1},
		{0x180, 1, true, -128},
		{0x180, 1, false, 0x80},
		{-5, 8, false, -5},
	} {
		if got := extend(tc.v, tc.size, tc.signed); got != tc.want {
			t.Errorf("extend(%#x, %d, %v) = %#x, want %#x", tc.v, tc.size, tc.signed, got, tc.want)
		}
	}
}

// TestParseClassNote decodes the note of a 32-bit object (gcc -m32):
// pc, base and semaphore are 4 bytes each.
func TestParseClassNote(t *testing.T) {
	desc := []byte{0x84, 0x10, 0, 0, 0x08, 0x20, 0, 0, 0x0c, 0x40, 0, 0}
	desc = append(desc, "p\x00work\x004@%eax 4@(%ebx)\x00"...)
	n, err := ParseClassNote(desc, elf.ELFCLASS32)
	if err != nil || n.PC != 0x1084 || n.Base != 0x2008 || n.Semaphore != 0x400c || n.Provider != "p" || n.Name != "work" ||
		len(n.Args) != 2 || n.ArgError != nil || !n.Args[1].Addr32 {
		t.Errorf("ParseClassNote = %+v, %v", n, err)
	}
	if _, err := ParseClassNote(desc[:11], elf.ELFCLASS32); err == nil {
		t.Error("a short 32-bit note: no error")
	}
}
