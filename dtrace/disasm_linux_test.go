//go:build linux

package dtrace

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// listingOf compiles src with -S and the given -x options and returns
// what it writes on stderr.
func listingOf(t *testing.T, src string, opts ...string) string {
	t.Helper()
	var stderr bytes.Buffer
	h := openTest(t, Config{Testing: true, Stderr: &stderr})
	h.opts.Verbose = true
	for _, o := range opts {
		if err := h.opts.SetArg(o); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Compile(Source{Name: "t", Text: src}); err != nil {
		t.Fatal(err)
	}
	return stderr.String()
}

// TestDisassemblyLayout: -S lists each clause as dtrace-utils does (the
// heading naming its probe descriptions in four fields and its symbol,
// the column headings, a line per instruction slot numbered from 0 with
// its byte offset), with our source line annotations as comment lines,
// and -x disasm without the clause bit lists nothing.
func TestDisassemblyLayout(t *testing.T) {
	insLine := regexp.MustCompile(`^([0-9]{4}) ([0-9]{5}): [0-9a-f]{2} [0-9a-f] [0-9a-f] [0-9a-f]{4} [0-9a-f]{8}    `)
	out := listingOf(t, "BEGIN\n{\n\texit(0);\n}\nsyscall::read:entry, write:entry { trace(arg0); }")
	lines := strings.Split(out, "\n")
	var heads []string
	slots := map[string]int{}
	cur := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "Disassembly of ") {
			heads = append(heads, l)
			cur = l
			continue
		}
		if m := insLine.FindStringSubmatch(l); m != nil {
			if m[1] != fmt.Sprintf("%04d", slots[cur]) || m[2] != fmt.Sprintf("%05d", 8*slots[cur]) {
				t.Errorf("%q: slot %d numbered %s at offset %s", l, slots[cur], m[1], m[2])
			}
			slots[cur]++
		}
	}
	want := []string{
		"Disassembly of clause :::BEGIN, <dt_clause_0>:",
		"Disassembly of clause syscall::read:entry, ::write:entry, <dt_clause_1>:",
	}
	if strings.Join(heads, "\n") != strings.Join(want, "\n") {
		t.Fatalf("headings:\n%s\nwant:\n%s\nlisting:\n%s", strings.Join(heads, "\n"), strings.Join(want, "\n"), out)
	}
	// options/tst.S asks for more than 20 of BEGIN { exit(0); }.
	if n := slots[want[0]]; n <= 20 {
		t.Errorf("%s: %d instruction lines", want[0], n)
	}
	if n := slots[want[1]]; n == 0 {
		t.Errorf("%s: no instruction lines", want[1])
	}
	if !strings.Contains(out, "\nINS  OFF    OPCODE                  INSTRUCTION\n") {
		t.Errorf("no column headings:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^ {36}! line 3: exit\(0\);$`).MatchString(out) {
		t.Errorf("no source line comment for line 3:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^[0-9]{4} [0-9]{5}: 95 0 0 0000 00000000    exit$`).MatchString(out) {
		t.Errorf("no exit instruction:\n%s", out)
	}
	if out := listingOf(t, "BEGIN { exit(0); }", "disasm=8"); strings.Contains(out, "Disassembly") {
		t.Errorf("-x disasm=8 listed clauses:\n%s", out)
	}
	if out := listingOf(t, "BEGIN { exit(0); }", "disasm=9"); !strings.Contains(out, "Disassembly of clause :::BEGIN") {
		t.Errorf("-x disasm=9 did not list the clause:\n%s", out)
	}
}

// runListing compiles and runs src with -S and -x disasm=bits and returns
// what it writes on stderr, the file descriptors of map loads (which
// differ from run to run) masked.
func runListing(t *testing.T, src string, bits int) string {
	t.Helper()
	var stderr bytes.Buffer
	h := openTest(t, Config{Testing: true, Stderr: &stderr})
	h.opts.Verbose = true
	h.opts.Quiet = true
	if err := h.opts.SetArg(fmt.Sprintf("disasm=%d", bits)); err != nil {
		t.Fatal(err)
	}
	startTest(t, h, "t", src)
	if out, status := runBounded(t, h, 30*time.Second); out != "1234\n" || status != 0 {
		t.Fatalf("disasm=%d: output %q, status %d", bits, out, status)
	}
	out := stderr.String()
	out = regexp.MustCompile(`(?m)^([0-9]{4} [0-9]{5}: 18 [0-9] [12] [0-9a-f]{4}) 0*[1-9a-f][0-9a-f]*    (lddw %r[0-9], )0x[0-9a-f]{16}`).
		ReplaceAllString(out, "$1 FD       ${2}FD")
	return regexp.MustCompile(`(?m)^(R_BPF_INSN_64 +[0-9]+ +)[0-9]+ +`).ReplaceAllString(out, "${1}FD       ")
}

// splitListing splits a listing as dtrace-util/tst.DisOption does: at
// each blank line followed by a "Disassembly of" heading of one of the
// four kinds, into that kind's part (what precedes the first is dropped).
func splitListing(s string) map[string]string {
	kinds := []string{"clause", "program", "linked program", "final program"}
	parts := map[string]*strings.Builder{}
	for _, k := range kinds {
		parts[k] = &strings.Builder{}
	}
	// A blank line goes where the next line goes; the last is dropped.
	var cur *strings.Builder
	blank := false
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if blank {
			for _, k := range kinds {
				if strings.HasPrefix(l, "Disassembly of "+k+" ") {
					cur = parts[k]
				}
			}
			if cur != nil {
				cur.WriteString("\n")
			}
		}
		blank = l == ""
		if !blank && cur != nil {
			cur.WriteString(l + "\n")
		}
	}
	m := map[string]string{}
	for _, k := range kinds {
		m[k] = parts[k].String()
	}
	return m
}

// TestDisassemblyStages: -x disasm's bits 2, 4 and 8 list each probe
// program as built (the clauses called by name, not yet in it), linked
// (the clauses appended, the calls resolved) and as loaded (map loads
// carrying file descriptors), under dtrace-utils' headings; disasm=15
// lists exactly what 1, 2, 4 and 8 list alone.
func TestDisassemblyStages(t *testing.T) {
	src := "int x;\nBEGIN { x = 1234; }\nBEGIN { trace(x); exit(0); }\n"
	single := map[int]string{}
	for _, bits := range []int{1, 2, 4, 8, 15} {
		single[bits] = runListing(t, src, bits)
	}
	heads := regexp.MustCompile(`(?m)^Disassembly of .*$`)
	want := map[int][]string{
		1: {"Disassembly of clause :::BEGIN, <dt_clause_0>:", "Disassembly of clause :::BEGIN, <dt_clause_1>:"},
		2: {"Disassembly of program dtrace:::BEGIN:"},
		4: {"Disassembly of linked program dtrace:::BEGIN:"},
		8: {"Disassembly of final program dtrace:::BEGIN:"},
	}
	for bits, w := range want {
		if got := heads.FindAllString(single[bits], -1); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("disasm=%d headings:\n%s\nwant:\n%s", bits, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
	}
	slots := func(s string) int {
		return len(regexp.MustCompile(`(?m)^[0-9]{4} [0-9]{5}: `).FindAllString(s, -1))
	}
	prog, linked, final := single[2], single[4], single[8]
	if !strings.Contains(prog, "call dt_clause_0") || !regexp.MustCompile(`(?m)^R_BPF_INSN_DISP32 +[0-9]+ +\*UND\* +dt_clause_1$`).MatchString(prog) {
		t.Errorf("disasm=2: no unresolved call of the clauses:\n%s", prog)
	}
	if !regexp.MustCompile(`(?m)^R_BPF_INSN_DISP32 +[0-9]+ +[0-9]+ +dt_clause_1$`).MatchString(linked) {
		t.Errorf("disasm=4: the clause calls are not resolved:\n%s", linked)
	}
	if slots(linked) <= slots(prog) || slots(final) != slots(linked) {
		t.Errorf("slots: program %d, linked %d, final %d", slots(prog), slots(linked), slots(final))
	}
	if strings.Contains(linked, " FD ") || strings.Contains(final, "*UND*") || !strings.Contains(final, "FD       dt_gvars") {
		t.Errorf("map loads: linked:\n%s\nfinal:\n%s", linked, final)
	}
	parts := splitListing(single[15])
	for bits, kind := range map[int]string{1: "clause", 2: "program", 4: "linked program", 8: "final program"} {
		alone, part := single[bits], parts[kind]
		if bits == 8 {
			// The split dropped the last blank line.
			part += "\n"
		}
		if part != alone {
			t.Errorf("disasm=15's %s listings differ from disasm=%d's:\n%s\nwant:\n%s", kind, bits, parts[kind], alone)
		}
	}
}
