//go:build linux

package dtrace

import (
	"bytes"
	"os"
	"testing"
)

// TestScriptOutput runs D scripts of testdata and compares what they
// print with NAME.out:
//   - print-value: print() of values that are not pointers (scalars,
//     chars, strings, enums, arrays, bit-fields, structs with anonymous
//     members) as illumos prints them; the elves struct's output is
//     illumos's print/tst.anon.ksh.out.
//   - tracemem-nbytes: tracemem()'s third argument, the corpus's
//     tracemem/tst.tracemem.r.
func TestScriptOutput(t *testing.T) {
	for _, name := range []string{"print-value", "tracemem-nbytes"} {
		t.Run(name, func(t *testing.T) {
			h := openTest(t, Config{})
			src, err := os.ReadFile("testdata/" + name + ".d")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Compile(Source{Name: name + ".d", Text: string(src)}); err != nil {
				t.Fatal(err)
			}
			if err := h.Go(); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if status, err := h.Run(&out, RunConfig{}); err != nil || status != 0 {
				t.Fatalf("Run: %d, %v", status, err)
			}
			want, err := os.ReadFile("testdata/" + name + ".out")
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
			}
		})
	}
}
