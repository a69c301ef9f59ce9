package ctf

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// TestObjdump writes a dictionary of D's containers and a program's kinds
// of types (a self-referring struct with a bit-field, a union, an enum,
// qualifiers, an array, a function pointer, a kernel struct by
// reference) and has binutils' objdump (libctf) read it back: every
// named type must be there, with its kind, size and members.
func TestObjdump(t *testing.T) {
	t.Run("D alone", func(t *testing.T) {
		d := types.DScope(256)
		var named []Named
		for _, n := range d.Names() {
			named = append(named, Named{n, d.Lookup(n)})
		}
		dump := objdump(t, named)
		for _, want := range []string{"(kind 10) _symaddr (size 0x0) (aligned at 0x0) -> 0x", ": (kind 1) void (format 0x0) (size 0x0)", "(kind 10) string (size 0x100)"} {
			if !strings.Contains(dump, want) {
				t.Errorf("objdump --ctf lacks %q:\n%s", want, dump)
			}
		}
	})
	node := &types.Struct{Tag: "node", Module: "D", Bytes: 24, Complete: true}
	node.Fields = []*types.Field{
		{Name: "next", Type: types.NewPointer(node), Offset: 0},
		{Name: "name", Type: &types.Qualified{Quals: types.Const, Type: types.NewPointer(&types.Qualified{Quals: types.Const, Type: types.Char})}, Offset: 64},
		{Name: "flags", Type: &types.Basic{K: types.KindInt, Name: "unsigned int", Bytes: 4, Bits: 3}, Offset: 128},
		{Name: "buf", Type: &types.Array{Elem: types.Char, Len: 4}, Offset: 160},
	}
	u := &types.Struct{Union: true, Tag: "u", Module: "D", Bytes: 8, Complete: true, Fields: []*types.Field{
		{Name: "i", Type: types.Int}, {Name: "l", Type: types.Long},
	}}
	color := &types.Enum{Tag: "color", Module: "D", Complete: true, Values: []types.Enumerator{{Name: "RED", Value: 0}, {Name: "BLUE", Value: -1}}}
	task := &types.Struct{Tag: "task_struct", Module: "vmlinux", Bytes: 9000, Complete: true}
	fn := &types.Typedef{Name: "handler_t", Module: "D", Type: types.NewPointer(&types.Func{Result: types.Int, Params: []types.Type{types.Long}, Variadic: true})}
	named := []Named{{"struct node", node}, {"union u", u}, {"enum color", color},
		{"taskp_t", &types.Typedef{Name: "taskp_t", Module: "D", Type: types.NewPointer(task)}}, {"handler_t", fn}}
	c := types.CScope()
	for _, n := range c.Names() {
		named = append(named, Named{n, c.Lookup(n)})
	}
	d := types.DScope(256)
	for _, n := range d.Names() {
		named = append(named, Named{n, d.Lookup(n)})
	}
	dump := objdump(t, named)
	for _, want := range []string{
		"CTF_VERSION_3",
		"struct node (size 0x18)",
		"[0x0] next: ID 0x",
		"[0x40] name: ID 0x",
		"[0x80] flags: ID 0x",
		"[0xa0] buf: ID 0x",
		"union u (size 0x8)",
		"enum color (size 0x4)",
		"RED: 0",
		"BLUE: -1",
		"taskp_t",
		"struct task_struct",
		"handler_t",
		"unsigned long long (format 0x0) (size 0x8)",
		"char (format 0x3) (size 0x1)",
		"(kind 10) string (size 0x100)",
		"long double",
		"uint64_t",
		"_usymaddr",
	} {
		if !strings.Contains(dump, want) {
			t.Errorf("objdump --ctf lacks %q", want)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^ +0x[0-9a-f]+: \(kind 1\) long \(format`).FindAllString(dump, -1)); n != 1 {
		t.Errorf("long written %d times, want once", n)
	}
	if t.Failed() {
		t.Logf("objdump --ctf:\n%s", dump)
	}
}

// objdump writes the dictionary of named, puts it in an ELF object's
// .ctf section and returns what objdump --ctf says of it.
func objdump(t *testing.T, named []Named) string {
	t.Helper()
	for _, tool := range []string{"objdump", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (binutils)", tool)
		}
	}
	if out, _ := exec.Command("objdump", "--help").Output(); !bytes.Contains(out, []byte("--ctf")) {
		t.Skip("this objdump reads no CTF")
	}
	var buf bytes.Buffer
	if err := Write(&buf, named); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raw, obj := filepath.Join(dir, "types.ctf"), filepath.Join(dir, "types.o")
	if err := os.WriteFile(raw, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("objcopy", "--add-section=.ctf="+raw, "/bin/true", obj).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "objdump", "--ctf=.ctf", obj).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	return string(out)
}
