//go:build linux

package ktypes

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// openKernel returns the running kernel's types, skipping where the
// kernel has no BTF.
func openKernel(t *testing.T) *Types {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); errors.Is(err, os.ErrNotExist) {
		t.Skip("the kernel has no BTF (/sys/kernel/btf/vmlinux)")
	}
	k := Open()
	if k.LookupType("", "struct task_struct") == nil {
		t.Fatalf("no struct task_struct: %v", k.Err())
	}
	return k
}

func TestRunningKernel(t *testing.T) {
	k := openKernel(t)
	ts := k.LookupType("", "struct task_struct").(*types.Struct)
	for member, want := range map[string]string{
		"pid":         "pid_t",
		"tgid":        "pid_t",
		"comm":        "char [16]",
		"real_parent": "struct task_struct *",
	} {
		f, _, ok := ts.Field(member)
		if !ok {
			t.Errorf("task_struct has no %s", member)
			continue
		}
		if got := types.TypeString(f.Type); got != want {
			t.Errorf("task_struct.%s is %s, want %s", member, got, want)
		}
	}
	f, _, _ := ts.Field("real_parent")
	if f.Type.(*types.Pointer).Elem != types.Type(ts) {
		t.Error("task_struct.real_parent points to another struct task_struct")
	}
	for _, name := range []string{"u64", "pid_t", "vmlinux`u32", "gfp_t"} {
		if !k.IsTypeName(name) {
			t.Errorf("%s is not a type name", name)
		}
	}
	if k.IsTypeName("task_struct") || k.IsTypeName("D`u64") {
		t.Error("a struct tag or a D-scoped name is a kernel typedef name")
	}
	if u := types.Underlying(k.LookupType("vmlinux", "u64")); u != types.Type(types.UnsignedLongLong) {
		t.Errorf("u64 is %v underneath, want unsigned long long", u)
	}
}

func TestRunningKernelSymbols(t *testing.T) {
	k := openKernel(t)
	// Text symbols are always in /proc/kallsyms (data symbols only with
	// CONFIG_KALLSYMS_ALL).
	sym, ok := k.LookupSymbol("", "schedule")
	if !ok {
		t.Fatalf("no symbol schedule: %v", k.SymbolsErr())
	}
	if sym.Module != "vmlinux" || types.TypeString(sym.Type) != "uintptr_t" {
		t.Errorf("schedule: %s`%s of type %s", sym.Module, sym.Name, types.TypeString(sym.Type))
	}
	if _, ok := k.LookupSymbol("", "no_such_symbol_here"); ok {
		t.Error("found a symbol that does not exist")
	}
}

// BenchmarkStartup measures what a dtrace run pays for kernel types:
// mapping the kernel's BTF and converting struct task_struct with all it
// reaches (curthread's type, which every program's checker resolves).
func BenchmarkStartup(b *testing.B) {
	for b.Loop() {
		k := Open()
		if k.LookupType("", "struct task_struct") == nil {
			b.Fatal(k.Err())
		}
	}
}

// TestMemberOffset checks the raw BTF walk against cilium/ebpf's full
// decoding of the running kernel's BTF.
func TestMemberOffset(t *testing.T) {
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ s, m string }{{"task_struct", "comm"}, {"task_struct", "pid"}, {"cred", "uid"}, {"linux_binprm", "file"}, {"file", "f_flags"}, {"path", "dentry"}} {
		var st *btf.Struct
		if err := spec.TypeByName(c.s, &st); err != nil {
			t.Fatal(err)
		}
		var want uint32
		found := false
		for _, m := range st.Members {
			if m.Name == c.m {
				want, found = uint32(m.Offset.Bytes()), true
			}
		}
		if !found {
			t.Fatalf("%s.%s not in cilium's decoding", c.s, c.m)
		}
		got, err := MemberOffset(raw, c.s, c.m)
		if err != nil || got != want {
			t.Errorf("MemberOffset(%s, %s) = %d, %v; want %d", c.s, c.m, got, err, want)
		}
	}
	// A member of an unnamed union (6.18's dentry.d_name) or struct.
	var dentry *btf.Struct
	if err := spec.TypeByName("dentry", &dentry); err != nil {
		t.Fatal(err)
	}
	want, ok := anonMemberOffset(dentry.Members, "d_name")
	if !ok {
		t.Fatal("dentry.d_name not in cilium's decoding")
	}
	if got, err := MemberOffset(raw, "dentry", "d_name"); err != nil || got != want {
		t.Errorf("MemberOffset(dentry, d_name) = %d, %v; want %d", got, err, want)
	}
	if _, err := MemberOffset(raw, "task_struct", "no_such_member"); err == nil {
		t.Error("a missing member gave no error")
	}
	if _, err := MemberOffset(raw[:100], "task_struct", "comm"); err == nil {
		t.Error("truncated BTF gave no error")
	}
}

// anonMemberOffset finds member name in ms or in their unnamed structs
// and unions, as cilium/ebpf decodes them.
func anonMemberOffset(ms []btf.Member, name string) (uint32, bool) {
	for _, m := range ms {
		if m.Name == name {
			return uint32(m.Offset.Bytes()), true
		}
		if m.Name != "" {
			continue
		}
		var inner []btf.Member
		switch u := btf.UnderlyingType(m.Type).(type) {
		case *btf.Struct:
			inner = u.Members
		case *btf.Union:
			inner = u.Members
		}
		if off, ok := anonMemberOffset(inner, name); ok {
			return uint32(m.Offset.Bytes()) + off, true
		}
	}
	return 0, false
}
