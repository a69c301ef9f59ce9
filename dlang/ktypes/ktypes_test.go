package ktypes

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/dlang/types"
)

// testSpec builds a small kernel: a self-referencing struct with a
// bit-field, an anonymous union, a typedef chain, an enum, a function
// pointer member, a forward declaration completed elsewhere, and a
// per-CPU variable.
func testSpec(t *testing.T) *btf.Spec {
	t.Helper()
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	u32 := &btf.Int{Name: "unsigned int", Size: 4}
	ul := &btf.Int{Name: "long unsigned int", Size: 8}
	char := &btf.Int{Name: "char", Size: 1, Encoding: btf.Signed}
	kpid := &btf.Typedef{Name: "__kernel_pid_t", Type: i32}
	pid := &btf.Typedef{Name: "pid_t", Type: kpid}
	uptr := &btf.Typedef{Name: "uintptr_t", Type: ul}
	state := &btf.Enum{Name: "state", Size: 4, Signed: true, Values: []btf.EnumValue{
		{Name: "S_RUN", Value: 0}, {Name: "S_NEG", Value: ^uint64(0)}}}
	fwd := &btf.Fwd{Name: "files", Kind: btf.FwdStruct}
	files := &btf.Struct{Name: "files", Size: 4, Members: []btf.Member{{Name: "count", Type: i32}}}
	cb := &btf.FuncProto{Return: i32, Params: []btf.FuncParam{{Name: "a", Type: i32}, {Type: &btf.Void{}}}}
	task := &btf.Struct{Name: "task", Size: 48}
	anon := &btf.Union{Size: 8, Members: []btf.Member{{Name: "u_a", Type: ul}, {Name: "u_b", Type: u32}}}
	task.Members = []btf.Member{
		{Name: "pid", Type: pid, Offset: 0},
		{Name: "flag", Type: u32, Offset: 32, BitfieldSize: 3},
		{Name: "parent", Type: &btf.Pointer{Target: task}, Offset: 64},
		{Name: "comm", Type: &btf.Array{Index: u32, Type: char, Nelems: 8}, Offset: 128},
		{Type: anon, Offset: 192},
		{Name: "fn", Type: &btf.Pointer{Target: cb}, Offset: 256},
		{Name: "files", Type: &btf.Pointer{Target: &btf.Const{Type: fwd}}, Offset: 320},
	}
	runqueues := &btf.Var{Name: "runqueues", Type: task, Linkage: btf.GlobalVar}
	sec := &btf.Datasec{Name: ".data..percpu", Size: 48, Vars: []btf.VarSecinfo{{Type: runqueues, Size: 48}}}
	b, err := btf.NewBuilder([]btf.Type{task, files, state, uptr, sec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := b.Spec()
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

const testKallsyms = `ffffffff81000000 T _stext
ffffffff81001000 T schedule
ffffffff82000000 D runqueues
ffffffffc0001000 t schedule	[dummy]
ffffffffc0002000 d modvar	[dummy]
ffffffffc0003000 T xschedule
ffffffff82001000 d x
ffffffff82002000 d dup
ffffffff82003000 D dup
ffffffffc0004000 D dup	[dummy]
`

func testTypes(t *testing.T) *Types {
	spec := testSpec(t)
	loads := 0
	return New(Source{
		Kernel: func() (*btf.Spec, error) {
			loads++
			if loads > 1 {
				t.Error("kernel BTF loaded twice")
			}
			return spec, nil
		},
		Symbols: func() (*Symbols, error) { return ParseKallsyms(strings.NewReader(testKallsyms)) },
	})
}

func TestStruct(t *testing.T) {
	k := testTypes(t)
	st, ok := k.LookupType("", "struct task").(*types.Struct)
	if !ok {
		t.Fatalf("struct task: got %v", k.LookupType("", "struct task"))
	}
	if st.Module != "vmlinux" || st.Size() != 48 || !st.Complete {
		t.Errorf("struct task: module %q size %d complete %v", st.Module, st.Size(), st.Complete)
	}
	if again := k.LookupType(Kernel, "struct task"); again != types.Type(st) {
		t.Error("a second lookup (vmlinux`task) gave another value")
	}
	tests := []struct {
		member string
		typ    string
		offset int64
		bits   int
	}{
		{"pid", "pid_t", 0, 0},
		{"flag", "unsigned int", 32, 3}, // of the size that holds 3 bits: checked below
		{"parent", "struct task *", 64, 0},
		{"comm", "char [8]", 128, 0},
		{"u_b", "unsigned int", 192, 0},
		{"fn", "int (*)(int, ...)", 256, 0},
		{"files", "const struct files *", 320, 0},
	}
	for _, tt := range tests {
		f, off, ok := st.Field(tt.member)
		if !ok {
			t.Errorf("member %s not found", tt.member)
			continue
		}
		if got := types.TypeString(f.Type); got != tt.typ || off != tt.offset || f.Bits != tt.bits {
			t.Errorf("member %s: %s at %d (%d bits), want %s at %d (%d bits)", tt.member, got, off, f.Bits, tt.typ, tt.offset, tt.bits)
		}
	}
	if f, _, _ := st.Field("flag"); f.Type.Size() != 1 {
		t.Errorf("bit-field flag:3 has size %d, want 1", f.Type.Size())
	}
	// The pointer to the struct leads back to the same value.
	f, _, _ := st.Field("parent")
	if f.Type.(*types.Pointer).Elem != types.Type(st) {
		t.Error("parent does not point to struct task")
	}
	// The forward declaration is resolved to the definition.
	f, _, _ = st.Field("files")
	files := types.Underlying(f.Type.(*types.Pointer).Elem).(*types.Struct)
	if !files.Complete || len(files.Fields) != 1 || files != k.LookupType("", "struct files") {
		t.Errorf("struct files through the forward declaration: %+v", files)
	}
	// pid_t keeps its typedef chain down to int.
	f, _, _ = st.Field("pid")
	if types.Underlying(f.Type) != types.Type(types.Int) {
		t.Errorf("pid_t is %v underneath, want int", types.Underlying(f.Type))
	}
}

func TestNames(t *testing.T) {
	k := testTypes(t)
	if e, ok := k.LookupType("", "enum state").(*types.Enum); !ok || len(e.Values) != 2 || e.Values[1].Value != -1 {
		t.Errorf("enum state: %+v", k.LookupType("", "enum state"))
	}
	if td, ok := k.LookupType("", "pid_t").(*types.Typedef); !ok || td.Module != "vmlinux" || td.Name != "pid_t" {
		t.Errorf("pid_t: %v", k.LookupType("", "pid_t"))
	}
	for _, absent := range []struct{ module, name string }{
		{"", "struct nosuch"},
		{"", "union task"}, // a struct, not a union
		{"", "task"},       // a tag is not a typedef name
		{"D", "pid_t"},     // D's own scope is the checker's
		{"nosuchmod", "pid_t"},
		{"vmlinux", "struct nosuch"},
	} {
		if got := k.LookupType(absent.module, absent.name); got != nil {
			t.Errorf("LookupType(%q, %q) = %v, want nil", absent.module, absent.name, got)
		}
	}
	// A module without BTF (not loaded) has incomplete structs and
	// unions of any name.
	if s, ok := k.LookupType("can", "struct dev_rcv_lists").(*types.Struct); !ok || s.Complete || s.Module != "can" || s != k.LookupType("can", "struct dev_rcv_lists") {
		t.Errorf("can`struct dev_rcv_lists: %#v", k.LookupType("can", "struct dev_rcv_lists"))
	}
	for name, want := range map[string]bool{
		"pid_t": true, "vmlinux`pid_t": true, "uintptr_t": true,
		"task": false, "int": false, "D`pid_t": false, "state": false, "nosuch": false,
	} {
		if got := k.IsTypeName(name); got != want {
			t.Errorf("IsTypeName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSymbols looks symbols up by module and name. Of several symbols of
// one name a lookup prefers a global one, and the kernel's to a module's;
// a local symbol is found, and says so.
func TestSymbols(t *testing.T) {
	k := testTypes(t)
	tests := []struct {
		module, name string
		ok           bool
		wantMod      string
		addr         uint64
		typ          string
		local        bool
	}{
		{"", "schedule", true, "vmlinux", 0xffffffff81001000, "uintptr_t", false},
		{"dummy", "schedule", true, "dummy", 0xffffffffc0001000, "uintptr_t", true},
		{"vmlinux", "runqueues", true, "vmlinux", 0xffffffff82000000, "struct task", false},
		{"", "modvar", true, "dummy", 0xffffffffc0002000, "<nil>", true}, // data BTF does not type
		{"vmlinux", "modvar", false, "", 0, "", false},
		{"", "sched", false, "", 0, "", false},
		{"", "_stext", true, "vmlinux", 0xffffffff81000000, "uintptr_t", false},
		{"", "xschedule", true, "vmlinux", 0xffffffffc0003000, "uintptr_t", false},
		{"", "x", true, "vmlinux", 0xffffffff82001000, "<nil>", true},
		{"vmlinux", "x", true, "vmlinux", 0xffffffff82001000, "<nil>", true},
		{"dummy", "x", false, "", 0, "", false}, // x is the kernel's
		{"", "dup", true, "vmlinux", 0xffffffff82003000, "<nil>", false},
		{"dummy", "dup", true, "dummy", 0xffffffffc0004000, "<nil>", false},
	}
	for _, tt := range tests {
		sym, ok := k.LookupSymbol(tt.module, tt.name)
		if ok != tt.ok {
			t.Errorf("LookupSymbol(%q, %q): found %v, want %v", tt.module, tt.name, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if sym.Module != tt.wantMod || sym.Addr != tt.addr || types.TypeString(sym.Type) != tt.typ || sym.Local != tt.local {
			t.Errorf("LookupSymbol(%q, %q) = %s`%s %#x %s local %v, want %s %#x %s local %v", tt.module, tt.name,
				sym.Module, sym.Name, sym.Addr, types.TypeString(sym.Type), sym.Local, tt.wantMod, tt.addr, tt.typ, tt.local)
		}
	}
}

// A Types without sources answers every lookup with nothing.
func TestNoSource(t *testing.T) {
	k := New(Source{})
	if k.LookupType("", "struct task") != nil || k.IsTypeName("pid_t") {
		t.Error("types found without BTF")
	}
	if _, ok := k.LookupSymbol("", "schedule"); ok {
		t.Error("symbol found without a symbol table")
	}
	if k.Err() == nil {
		t.Error("Err is nil without BTF")
	}
}

// Lookups from several goroutines see one conversion of each type.
func TestConcurrent(t *testing.T) {
	k := testTypes(t)
	const n = 8
	got := make(chan types.Type, n)
	for i := 0; i < n; i++ {
		go func() {
			k.IsTypeName("pid_t")
			k.LookupSymbol("", "schedule")
			got <- k.LookupType("", "struct task")
		}()
	}
	first := <-got
	for i := 1; i < n; i++ {
		if t2 := <-got; t2 != first || t2 == nil {
			t.Fatalf("goroutines got different struct task values: %p, %p", first, t2)
		}
	}
}

// After enough searches the table is indexed; lookups answer the same.
func TestSymbolsIndex(t *testing.T) {
	s, err := ParseKallsyms(strings.NewReader(testKallsyms))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"schedule", "runqueues", "modvar", "xschedule", "_stext", "sched", "chedule", ""}
	type result struct {
		sym Sym
		ok  bool
	}
	var before []result
	for _, n := range names {
		sym, ok := s.Lookup("", n)
		before = append(before, result{sym, ok})
	}
	for i := 0; i <= indexAfter; i++ {
		s.Lookup("dummy", "schedule")
	}
	if s.index == nil {
		t.Fatal("no index after many lookups")
	}
	for i, n := range names {
		sym, ok := s.Lookup("", n)
		if (result{sym, ok}) != before[i] {
			t.Errorf("Lookup(%q): %+v %v with the index, %+v %v without", n, sym, ok, before[i].sym, before[i].ok)
		}
	}
	if sym, ok := s.Lookup("dummy", "schedule"); !ok || sym.Addr != 0xffffffffc0001000 {
		t.Errorf("dummy`schedule with the index: %+v %v", sym, ok)
	}
}
