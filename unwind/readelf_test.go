package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readelfRow is one row of `readelf --debug-dump=frames-interp`.
type readelfRow struct {
	loc           uint64
	cfa, rbp, ra  string
	rbx           string
	signal        bool
	fdeBegin, end uint64
}

// readelfRows runs readelf on path and returns every FDE row it prints.
func readelfRows(t *testing.T, path string) []readelfRow {
	t.Helper()
	// readelf exits 1 on some objects (libc) after printing every
	// frame: its output is what counts.
	out, err := exec.Command("readelf", "-W", "--debug-dump=frames-interp", path).Output()
	if len(out) == 0 {
		t.Fatalf("readelf: %v", err)
	}
	var rows []readelfRow
	// CIEs by section and offset: whether they are signal frames, and
	// the row of their initial instructions, which an FDE without
	// instructions of its own has (readelf prints no row for it).
	signalCIE := map[string]bool{}
	cieRow := map[string]readelfRow{}
	section, cieKey := "", ""
	var cols []string
	var cur readelfRow
	inFDE, synthetic := false, false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "Contents" && f[1] == "of":
			section = f[3]
		case len(f) >= 4 && f[3] == "CIE":
			cieKey = section + f[0]
			signalCIE[cieKey] = len(f) > 4 && strings.Contains(f[4], "S")
			inFDE = false
		case len(f) >= 6 && f[3] == "FDE":
			cie := section + strings.TrimPrefix(f[4], "cie=")
			rng := strings.Split(strings.TrimPrefix(f[5], "pc="), "..")
			b, _ := strconv.ParseUint(rng[0], 16, 64)
			e, _ := strconv.ParseUint(rng[1], 16, 64)
			cur = readelfRow{signal: signalCIE[cie], fdeBegin: b, end: e}
			inFDE = true
			if r, ok := cieRow[cie]; ok {
				r.signal, r.fdeBegin, r.end, r.loc = cur.signal, b, e, b
				rows = append(rows, r)
				synthetic = true
			}
		case len(f) > 1 && f[0] == "LOC":
			cols = f
		case len(f) == len(cols) && len(f) > 1:
			r := cur
			var err error
			if r.loc, err = strconv.ParseUint(f[0], 16, 64); err != nil {
				continue
			}
			r.rbp, r.rbx, r.ra = "u", "u", "u?"
			for i, c := range cols {
				switch c {
				case "CFA":
					r.cfa = f[i]
				case "rbp":
					r.rbp = f[i]
				case "rbx":
					r.rbx = f[i]
				case "ra":
					r.ra = f[i]
				}
			}
			if !inFDE {
				cieRow[cieKey] = r // the CIE's initial row
				continue
			}
			if synthetic && len(rows) > 0 && rows[len(rows)-1].loc == r.loc {
				rows = rows[:len(rows)-1]
			}
			synthetic = false
			rows = append(rows, r)
		}
	}
	return rows
}

// want is the row readelf's rules compile to.
func (r readelfRow) want() Row {
	w := Row{}
	switch {
	case r.signal:
		w.CFA = CFASignal
		return w
	case r.ra == "u":
		w.CFA = CFAEnd
		return w
	case r.ra != "c-8":
		return w
	}
	reg, off, _ := strings.Cut(strings.NewReplacer("+", " ", "-", " -").Replace(r.cfa), " ")
	switch reg {
	case "rsp":
		w.CFA = CFARSP
	case "rbp":
		w.CFA = CFARBP
	case "rbx":
		w.CFA = CFARBX
	case "exp":
		w.CFA = CFAPLT // or CFANone for an expression we do not follow
		return w
	default:
		i := slices.Index(dwarfRegs, reg)
		if i < 0 {
			return w
		}
		w.CFA, w.Aux = CFAReg, uint16(regOffsets[i][0])|uint16(regOffsets[i][1])<<8
	}
	n, _ := strconv.ParseInt(off, 10, 64)
	w.CFAOff = int32(n)
	w.RBP, w.RBPOff = readelfSaved(r.rbp)
	w.RBX, w.RBXOff = readelfSaved(r.rbx)
	return w
}

// dwarfRegs are readelf's names of the x86-64 DWARF registers 0 to 15.
var dwarfRegs = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"}

// readelfSaved is the rule a readelf column of a callee-saved register
// compiles to: "c-16" saved at CFA-16, "u" (undefined or unspecified) and
// "s" (same value) unchanged, anything else unknown.
func readelfSaved(col string) (RBPKind, int32) {
	switch {
	case strings.HasPrefix(col, "c"):
		n, _ := strconv.ParseInt(col[1:], 10, 64)
		return RBPAt, int32(n)
	case col == "u", col == "s":
		return RBPSame, 0
	}
	return RBPLost, 0
}

// openELF opens the object at path, failing the test if it cannot, and
// closes it when the test ends.
func openELF(t *testing.T, path string) *elf.File {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// testObjects are objects of the machine whose tables are checked against
// readelf: libc, a C program without frame pointers, and the python3 and
// gzip that the numbers profile (where installed).
func testObjects(t *testing.T) []string {
	objs := []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/gzip", "/usr/bin/python3", "/lib64/ld-linux-x86-64.so.2"}
	var have []string
	for _, p := range objs {
		if _, err := os.Stat(p); err == nil {
			have = append(have, p)
		}
	}
	if len(have) == 0 {
		t.Skip("no x86-64 objects here")
	}
	// A program whose own functions are described only in .debug_frame
	// (-fno-asynchronous-unwind-tables -g; crt's _start and the PLT stay
	// in .eh_frame): both sections are read and merged.
	src := filepath.Join(t.TempDir(), "df.c")
	exe := strings.TrimSuffix(src, ".c")
	code := "volatile int s;\n__attribute__((noinline)) void f(int n) { for (int i = 0; i < n; i++) s += i; }\n" +
		"__attribute__((noinline)) int g(int n) { f(n); return s + 1; }\nint main(int c, char **v) { (void)v; return g(c); }\n"
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O2", "-g", "-fno-asynchronous-unwind-tables", "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return append(have, exe)
}

// TestAgainstReadelf compiles the CFI of real objects and checks, at every
// row readelf prints, that the table gives the same rules for the CFA, the
// return address and rbp.
func TestAgainstReadelf(t *testing.T) {
	for _, path := range testObjects(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f := openELF(t, path)
			tb, err := Build(f, f)
			if err != nil {
				t.Fatal(err)
			}
			segs := execSegments(f)
			rows := readelfRows(t, path)
			if len(rows) < 5 {
				t.Fatalf("readelf printed %d rows", len(rows))
			}
			bad := 0
			plt := 0
			for _, r := range rows {
				if r.loc >= r.end {
					continue // readelf prints the state at the FDE's end too
				}
				seg, ok := segmentOf(segs, r.loc)
				if !ok {
					continue
				}
				got, ok := tb.Lookup(r.loc - seg.vaddr + seg.off)
				want := r.want()
				if want.CFA == CFAPLT && got.CFA == CFAPLT {
					plt++
					continue
				}
				if want.CFA == CFAPLT {
					want = Row{} // an expression we do not follow
				}
				got.PC = 0
				if !ok || got != want {
					bad++
					if bad <= 5 {
						t.Errorf("%#x (FDE %#x..%#x): readelf cfa=%s rbp=%s rbx=%s ra=%s, want %v, table has %v", r.loc, r.fdeBegin, r.end, r.cfa, r.rbp, r.rbx, r.ra, want, got)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d rows differ", bad, len(rows))
			}
			t.Logf("%d readelf rows, %d table rows (%d FDEs), %d PLT rows", len(rows), len(tb.Rows), tb.FDEs, plt)
		})
	}
}

// TestPLTExpression checks the PLT pattern decoder on binutils' two forms
// (lazy .plt: K=11; .plt.sec under IBT: K=10) and refuses near misses.
func TestPLTExpression(t *testing.T) {
	for _, k := range []byte{10, 11} {
		e := append([]byte(nil), pltExpr...)
		e[pltExprN], e[pltExprK] = 8, 0x30+k
		n, got, ok := matchPLT(e)
		if !ok || n != 8 || got != uint16(k) {
			t.Errorf("K=%d: got %d %d %v", k, n, got, ok)
		}
	}
	e := append([]byte(nil), pltExpr...)
	e[pltExprN], e[pltExprK] = 8, 0x3b
	e[5] = 0x1b // DW_OP_div, not DW_OP_and
	if _, _, ok := matchPLT(e); ok {
		t.Error("matched a different expression")
	}
	if _, _, ok := matchPLT(e[:5]); ok {
		t.Error("matched a short expression")
	}
}

// TestSignalAndEnd finds the rows a stack walk ends or crosses a signal
// frame at in libc: __restore_rt's FDE ('S') and the thread start
// routines whose return address is undefined.
func TestSignalAndEnd(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	f, err := elf.Open(libc)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	tb, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.DynamicSymbols()
	var restore, clone uint64
	for _, s := range syms {
		switch s.Name {
		case "__clone":
			clone = s.Value
		}
	}
	// __restore_rt is local; find it by its code (mov $15,%rax;
	// syscall) at the start of the FDE marked 'S'.
	for _, r := range tb.Rows {
		if r.CFA == CFASignal {
			restore = r.PC
		}
	}
	if restore == 0 {
		t.Fatal("no signal frame row in libc")
	}
	raw, err := os.ReadFile(libc)
	if err != nil {
		t.Fatal(err)
	}
	// The FDE starts one byte before __restore_rt (a nop), so that a
	// return address there minus one still falls inside.
	if got := raw[restore+1 : restore+10]; !bytes.Equal(got, []byte{0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05}) {
		t.Errorf("signal row at %#x is not before mov $15,%%rax; syscall: % x", restore, got)
	}
	ends := 0
	for _, r := range tb.Rows {
		if r.CFA == CFAEnd {
			ends++
			if clone != 0 && r.PC > clone && r.PC < clone+0x100 {
				clone = 0
			}
		}
	}
	if clone != 0 {
		t.Errorf("no end-of-stack row inside __clone: %v", fmt.Sprint(ends))
	}
}
