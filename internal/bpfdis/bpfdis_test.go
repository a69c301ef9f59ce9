package bpfdis

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

// pad30 writes a comment as dt_dis.c does: the instruction text padded
// to DT_DIS_INSTR_LEN (30) columns, then "! ".
func pad30(text, c string) string {
	return text + strings.Repeat(" ", 30-len(text)) + "! " + c
}

// TestFormatDtDis checks instructions of each class dtrace-utils' table
// (libdtrace/dt_dis.c, optab) names against the text its handlers print:
// dt_dis_op1/op2/op2imm ("%-4s %s, %d"), dt_dis_branch ("%-4s %s, %s,
// %d"), dt_dis_branch_imm (immediate as %u) and dt_dis_sbranch_imm (%d),
// each followed by "! -> %03u" (addr + 1 + off), dt_dis_jump ("nop" for
// an offset of 0), dt_dis_load ("%-4s %s, [%s%+d]"), dt_dis_store and
// dt_dis_store_imm ("%-4s [%s%+d], ..."), dt_dis_load_imm (two slots,
// "0x%08x%08x" high word first, the relocation name on the second
// slot's line after 30 blanks), dt_dis_call (helpers by their kernel
// name, "helper#N" with "! unknown helper" beyond the list) and
// dt_dis_str ("exit", "(illegal opcode)").
func TestFormatDtDis(t *testing.T) {
	checkFormat(t, []formatCase{
		// ALU, 64- and 32-bit (dt_dis.c names both alike).
		{0, Insn{Code: 0xbf, Dst: 6, Src: 1}, Note{}, "mov  %r6, %r1"},
		{0, Insn{Code: 0xb7, Dst: 8, Imm: 0}, Note{}, "mov  %r8, 0"},
		{0, Insn{Code: 0x07, Dst: 4, Imm: 512}, Note{}, "add  %r4, 512"},
		{0, Insn{Code: 0x04, Dst: 1, Imm: -1}, Note{}, "add  %r1, -1"},
		{0, Insn{Code: 0x1f, Dst: 1, Src: 10}, Note{}, "sub  %r1, %fp"},
		{0, Insn{Code: 0x67, Dst: 1, Imm: 32}, Note{}, "lsh  %r1, 32"},
		{0, Insn{Code: 0xcf, Dst: 2, Src: 3}, Note{}, "arsh %r2, %r3"},
		{0, Insn{Code: 0x9c, Dst: 2, Src: 3}, Note{}, "mod  %r2, %r3"},
		{0, Insn{Code: 0x87, Dst: 3}, Note{}, "neg  %r3"},
		{0, Insn{Code: 0x84, Dst: 3}, Note{}, "neg  %r3"},
		{0, Insn{Code: 0xdc, Dst: 1, Imm: 16}, Note{}, "tobe %r1, 16"},
		{0, Insn{Code: 0xd4, Dst: 1, Imm: 64}, Note{}, "tole %r1, 64"},
		// dt_dis_refname: a relocation name after an immediate.
		{0, Insn{Code: 0x07, Dst: 1, Imm: 16}, Note{Name: "x"}, pad30("add  %r1, 16", "x")},
		// Jumps.
		{7, Insn{Code: 0x15, Dst: 1, Off: 14, Imm: 2}, Note{}, pad30("jeq  %r1, 2, 14", "-> 022")},
		{0, Insn{Code: 0x15, Dst: 1, Off: 3, Imm: -1}, Note{}, pad30("jeq  %r1, 4294967295, 3", "-> 004")},
		{0, Insn{Code: 0x55, Dst: 1, Off: 3, Imm: -1}, Note{}, pad30("jne  %r1, 4294967295, 3", "-> 004")},
		{10, Insn{Code: 0x65, Dst: 1, Off: -3, Imm: -1}, Note{}, pad30("jsgt %r1, -1, -3", "-> 008")},
		{10, Insn{Code: 0xc5, Dst: 1, Off: 1, Imm: -5}, Note{}, pad30("jslt %r1, -5, 1", "-> 012")},
		{18, Insn{Code: 0x1d, Dst: 0, Src: 2, Off: 5}, Note{}, pad30("jeq  %r0, %r2, 5", "-> 024")},
		{1, Insn{Code: 0x5e, Dst: 1, Src: 2, Off: 1}, Note{}, pad30("jne  %r1, %r2, 1", "-> 003")},
		{1, Insn{Code: 0x46, Dst: 1, Off: 1, Imm: 8}, Note{}, pad30("jset %r1, 8, 1", "-> 003")},
		{21, Insn{Code: 0x05, Off: 2}, Note{}, pad30("ja   2", "-> 024")},
		{3, Insn{Code: 0x05}, Note{}, "nop"},
		// Loads and stores.
		{0, Insn{Code: 0x61, Dst: 1, Src: 7, Off: 80}, Note{}, "ldw  %r1, [%r7+80]"},
		{0, Insn{Code: 0x71, Dst: 1, Src: 7}, Note{}, "ldb  %r1, [%r7+0]"},
		{0, Insn{Code: 0x69, Dst: 1, Src: 7, Off: 2}, Note{}, "ldh  %r1, [%r7+2]"},
		{0, Insn{Code: 0x79, Dst: 2, Src: 10, Off: -8}, Note{}, "lddw %r2, [%fp-8]"},
		{0, Insn{Code: 0x7b, Dst: 10, Src: 1, Off: -16}, Note{}, "stdw [%fp-16], %r1"},
		{0, Insn{Code: 0x63, Dst: 9, Src: 8, Off: 4}, Note{}, "stw  [%r9+4], %r8"},
		{0, Insn{Code: 0x73, Dst: 9, Src: 8}, Note{}, "stb  [%r9+0], %r8"},
		{0, Insn{Code: 0x62, Dst: 9, Imm: 2}, Note{}, "stw  [%r9+0], 2"},
		{0, Insn{Code: 0x6a, Dst: 9, Off: 6, Imm: -2}, Note{}, "sth  [%r9+6], -2"},
		{0, Insn{Code: 0x7a, Dst: 1, Off: 8, Imm: -1}, Note{}, "stdw [%r1+8], -1"},
		{0, Insn{Code: 0x7a, Dst: 1, Off: 8, Imm: 0}, Note{Name: "v"}, pad30("stdw [%r1+8], 0", "= v")},
		// Atomics: the add dtrace-utils emits.
		{0, Insn{Code: 0xdb, Dst: 9, Src: 1}, Note{}, "xadd [%r9+0], %r1"},
		{0, Insn{Code: 0xc3, Dst: 9, Src: 1, Off: 8}, Note{}, "xadd [%r9+8], %r1"},
		// Calls and exit.
		{0, Insn{Code: 0x85, Imm: 25}, Note{}, "call bpf_perf_event_output"},
		{0, Insn{Code: 0x85, Imm: 1}, Note{}, "call bpf_map_lookup_elem"},
		{0, Insn{Code: 0x85, Src: 1, Imm: -1}, Note{Name: "dt_cleanpath"}, "call dt_cleanpath"},
		{0, Insn{Code: 0x85, Src: 1, Imm: 4}, Note{}, "call 4"},
		{0, Insn{Code: 0x85, Imm: 100000}, Note{}, pad30("call helper#100000", "unknown helper")},
		{0, Insn{Code: 0x95}, Note{}, "exit"},
		// What the table does not name.
		{0, Insn{Code: 0x00}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0x20}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0x8d}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0x8f, Dst: 1}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0xe7, Dst: 1}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0x0d}, Note{}, "(illegal opcode)"},
		{0, Insn{Code: 0x96}, Note{}, "(illegal opcode)"},
	})
}

// formatCase is an instruction at slot at, what the listing knows of it
// and the text Format should give.
type formatCase struct {
	at   int
	ins  Insn
	note Note
	want string
}

func checkFormat(t *testing.T, cases []formatCase) {
	t.Helper()
	for _, tc := range cases {
		prog := make([]Insn, tc.at+1)
		prog[tc.at] = tc.ins
		got, skip := Format(prog, tc.at, tc.note, Helper)
		if got != tc.want || skip != 0 {
			t.Errorf("%02x at %d: %q (skip %d), want %q", tc.ins.Code, tc.at, got, skip, tc.want)
		}
	}
}

// TestFormatLddw: a 64-bit immediate load takes two slots, printed as
// dt_dis_load_imm does.
func TestFormatLddw(t *testing.T) {
	prog := []Insn{
		{Code: 0x18, Dst: 3, Imm: -1}, {},
		{Code: 0x18, Dst: 2, Src: 1}, {},
		{Code: 0x18, Dst: 1, Imm: int32(-0x76543211)}, {Imm: 0x01234567},
	}
	for _, tc := range []struct {
		at   int
		note Note
		want string
	}{
		{0, Note{}, "lddw %r3, 0x00000000ffffffff\n0001 00008: 00 0 0 0000 00000000    "},
		{2, Note{Name: "dt_buf"}, "lddw %r2, 0x0000000000000000\n0003 00024: 00 0 0 0000 00000000    " +
			strings.Repeat(" ", 30) + "! dt_buf"},
		{4, Note{}, "lddw %r1, 0x0123456789abcdef\n0005 00040: 00 0 0 0000 01234567    "},
	} {
		got, skip := Format(prog, tc.at, tc.note, Helper)
		if got != tc.want || skip != 1 {
			t.Errorf("lddw at %d: %q (skip %d), want %q (skip 1)", tc.at, got, skip, tc.want)
		}
	}
}

// TestFormatOurs checks the instructions dt_dis.c's table has no entry
// for (ISA v3 and v4, emitted by our code generator): named in its style
// instead of "(illegal opcode)".
func TestFormatOurs(t *testing.T) {
	checkFormat(t, []formatCase{
		{0, Insn{Code: 0xdb, Dst: 9, Src: 1, Imm: 0xf1}, Note{}, "cmpxchg [%r9+0], %r1"},
		{0, Insn{Code: 0xdb, Dst: 9, Src: 1, Imm: 0xe1}, Note{}, "xchg [%r9+0], %r1"},
		{0, Insn{Code: 0xdb, Dst: 9, Src: 1, Imm: 0x01}, Note{}, "xfadd [%r9+0], %r1"},
		{0, Insn{Code: 0xc3, Dst: 9, Src: 1, Imm: 0x40}, Note{}, "xor  [%r9+0], %r1"},
		{0, Insn{Code: 0xbf, Dst: 8, Src: 8, Off: 32}, Note{}, "movs32 %r8, %r8"},
		{0, Insn{Code: 0xbc, Dst: 8, Src: 2, Off: 8}, Note{}, "movs8 %r8, %r2"},
		{0, Insn{Code: 0x3f, Dst: 1, Src: 2, Off: 1}, Note{}, "sdiv %r1, %r2"},
		{0, Insn{Code: 0x97, Dst: 1, Off: 1, Imm: 7}, Note{}, "smod %r1, 7"},
		{0, Insn{Code: 0xd7, Dst: 1, Imm: 64}, Note{}, "bswap %r1, 64"},
		{0, Insn{Code: 0x81, Dst: 1, Src: 2, Off: 4}, Note{}, "ldsw %r1, [%r2+4]"},
		{0, Insn{Code: 0x06, Imm: 5}, Note{}, pad30("jal  5", "-> 006")},
		{0, Insn{Code: 0x85, Src: 2}, Note{Name: "bpf_rcu_read_lock"}, pad30("call bpf_rcu_read_lock", "kfunc")},
		{0, Insn{Code: 0x15, Dst: 1, Off: 2}, Note{Label: "dt_clause_0.out"}, pad30("jeq  %r1, 0, 2", "-> 003 dt_clause_0.out")},
	})
}

// TestListing encodes a small function as the loader will and lists it:
// jumps to its labels resolved, map loads in two slots with the map's
// name, each source line once where its code starts.
func TestListing(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0).WithSymbol("f").WithSource(asm.Comment("line 1: a")),
		asm.JEq.Imm(asm.R1, 0, "f.out").WithSource(asm.Comment("line 1: a")),
		asm.LoadMapPtr(asm.R1, 0).WithReference("dt_buf"),
		asm.FnMapLookupElem.Call().WithSource(asm.Comment("line 2: b")),
		asm.Call.Label("dt_sub"),
		asm.Mov.Imm(asm.R0, 1).WithSymbol("f.out"),
		asm.Return(),
	}
	l, err := FromInstructions(insns)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	l.Write(&b)
	l.WriteRelocs(&b)
	ind := strings.Repeat(" ", 36)
	want := strings.Join([]string{
		"INS  OFF    OPCODE" + strings.Repeat(" ", 18) + "INSTRUCTION",
		ind + "! line 1: a",
		"0000 00000: b7 0 0 0000 00000000    mov  %r0, 0",
		"0001 00008: 15 1 0 0004 00000000    " + pad30("jeq  %r1, 0, 4", "-> 006 f.out"),
		"0002 00016: 18 1 1 0000 00000000    lddw %r1, 0x0000000000000000",
		"0003 00024: 00 0 0 0000 00000000    " + strings.Repeat(" ", 30) + "! dt_buf",
		ind + "! line 2: b",
		"0004 00032: 85 0 0 0000 00000001    call bpf_map_lookup_elem",
		"0005 00040: 85 0 1 0000 ffffffff    call dt_sub",
		"0006 00048: b7 0 0 0000 00000001    mov  %r0, 1",
		"0007 00056: 95 0 0 0000 00000000    exit",
		"",
		"BPF               OFFSET   VALUE    NAME",
		"R_BPF_INSN_64     16       *UND*    dt_buf",
		"R_BPF_INSN_DISP32 40       *UND*    dt_sub",
		"",
	}, "\n")
	if got := b.String(); got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
}

// TestHelperNames checks Helper against the kernel's own list of helper
// names (linux/bpf.h's __BPF_FUNC_MAPPER), where the headers are
// installed.
func TestHelperNames(t *testing.T) {
	b, err := os.ReadFile("/usr/include/linux/bpf.h")
	if err != nil {
		t.Skip(err)
	}
	names := regexp.MustCompile(`(?m)^\s*FN\((\w+)[,)]`).FindAllStringSubmatch(string(b), -1)
	if len(names) < 100 {
		t.Fatalf("found %d helper names in linux/bpf.h", len(names))
	}
	lastKnown := asm.FnCgrpStorageDelete - asm.FnUnspec
	for id, m := range names[1:] {
		if got, want := Helper(int32(id+1)), "bpf_"+m[1]; got != want && (got != "" || id+1 <= int(lastKnown)) {
			t.Errorf("helper %d: %q, want %q", id+1, got, want)
		}
	}
	if got := Helper(int32(lastKnown) + 1); got != "" {
		t.Errorf("helper %d beyond cilium/ebpf's list: %q", lastKnown+1, got)
	}
}

func TestHelperSample(t *testing.T) {
	for id, want := range map[int32]string{1: "bpf_map_lookup_elem", 25: "bpf_perf_event_output", 10: "bpf_l3_csum_replace", 113: "bpf_probe_read_kernel", 7: "bpf_get_prandom_u32", 0: "bpf_unspec", -1: "", 100000: ""} {
		if got := Helper(id); got != want {
			t.Errorf("Helper(%d) = %q, want %q", id, got, want)
		}
	}
}
