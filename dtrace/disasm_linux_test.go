//go:build linux

package dtrace

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
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
