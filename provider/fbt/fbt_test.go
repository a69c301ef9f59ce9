package fbt

import (
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dtrace-go/dtrace/provider"
)

const sample = `vfs_read
vfs_write
__ftrace_invalid_address___123
show_stat
show_stat
nfs_read_folio [nfs]
show_stat [nfs]
`

func fake() *Provider {
	pv := New()
	pv.once.Do(func() {})
	pv.funcs, pv.byName = parseFunctions([]byte(sample))
	return pv
}

func TestParseFunctions(t *testing.T) {
	pv := fake()
	want := []function{{"vmlinux", "vfs_read"}, {"vmlinux", "vfs_write"}, {"vmlinux", "show_stat"}, {"nfs", "nfs_read_folio"}, {"nfs", "show_stat"}}
	if len(pv.funcs) != len(want) {
		t.Fatalf("got %v, want %v", pv.funcs, want)
	}
	for i := range want {
		if pv.funcs[i] != want[i] {
			t.Errorf("function %d: got %v, want %v", i, pv.funcs[i], want[i])
		}
	}
	if pv.Unavailable() != "" {
		t.Errorf("Unavailable with functions: %q", pv.Unavailable())
	}
	empty := New()
	empty.once.Do(func() { empty.reason = "no function tracer" })
	if got := empty.Unavailable(); got != "this kernel does not offer fbt: no function tracer" {
		t.Errorf("Unavailable: %q", got)
	}
}

func TestProbes(t *testing.T) {
	pv := fake()
	for _, c := range []struct {
		d    provider.Desc
		want []string
	}{
		{provider.Desc{Function: "vfs_read"}, []string{"fbt:vmlinux:vfs_read:entry", "fbt:vmlinux:vfs_read:return"}},
		{provider.Desc{Function: "vfs_*", Name: "entry"}, []string{"fbt:vmlinux:vfs_read:entry", "fbt:vmlinux:vfs_write:entry"}},
		{provider.Desc{Module: "nfs", Name: "ret*"}, []string{"fbt:nfs:nfs_read_folio:return", "fbt:nfs:show_stat:return"}},
		{provider.Desc{Module: "vmlinux", Function: "show_stat", Name: "entry"}, []string{"fbt:vmlinux:show_stat:entry"}},
		{provider.Desc{Function: "vfs_read", Name: "BEGIN"}, nil},
	} {
		ps, err := pv.Probes(c.d)
		if err != nil {
			t.Fatal(err)
		}
		got := provider.Names(ps)
		if len(got) != len(c.want) {
			t.Errorf("%v: got %v, want %v", c.d, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: got %v, want %v", c.d, got, c.want)
				break
			}
		}
	}
	all, _ := pv.Probes(provider.Desc{})
	if len(all) != 10 {
		t.Errorf("Probes(Desc{}) gave %d probes, want 10", len(all))
	}
}

// The registry leaves fbt alone for descriptions of other probe names.
func TestRegistrySkipsByName(t *testing.T) {
	pv := fake()
	r := provider.NewRegistry(pv)
	ps, err := r.Match(provider.Desc{Name: "BEGIN"})
	if err != nil || len(ps) != 0 {
		t.Fatalf("Match(BEGIN) = %v, %v", ps, err)
	}
	if r.Probe(1) != nil {
		t.Errorf("matching BEGIN numbered fbt's probes")
	}
	if got := r.Unavailable(provider.Desc{Provider: "fbt"}); got != "" {
		t.Errorf("Unavailable = %q with functions", got)
	}
	empty := New()
	empty.once.Do(func() { empty.reason = "no function tracer" })
	r = provider.NewRegistry(empty)
	if got := r.Unavailable(provider.Desc{Provider: "fbt", Function: "foo", Name: "entry"}); got != "this kernel does not offer fbt: no function tracer" {
		t.Errorf("Unavailable(fbt::foo:entry) = %q", got)
	}
	for _, d := range []provider.Desc{{Provider: "fbt", Name: "boo"}, {Provider: "fb*", Name: "entry"}} {
		if got := r.Unavailable(d); got != "" {
			t.Errorf("Unavailable(%v) = %q, want none", d, got)
		}
	}
}

func TestCType(t *testing.T) {
	file := &btf.Struct{Name: "file"}
	loff := &btf.Typedef{Name: "loff_t", Type: &btf.Int{Name: "long long int", Size: 8, Encoding: btf.Signed}}
	char := &btf.Int{Name: "char", Size: 1}
	for _, c := range []struct {
		t    btf.Type
		want string
	}{
		{&btf.Pointer{Target: file}, "struct file *"},
		{&btf.Pointer{Target: loff}, "loff_t *"},
		{&btf.Pointer{Target: &btf.Pointer{Target: &btf.Const{Type: char}}}, "char **"},
		{&btf.Pointer{Target: &btf.Void{}}, "void *"},
		{&btf.Pointer{Target: &btf.Struct{}}, "void *"},
		{&btf.Enum{Name: "x", Size: 4}, "enum x"},
		{loff, "loff_t"},
	} {
		if got := CType(c.t); got != c.want {
			t.Errorf("CType(%v) = %q, want %q", c.t, got, c.want)
		}
	}
	if size, signed, ok := scalar(loff); size != 8 || !signed || !ok {
		t.Errorf("scalar(loff_t) = %d, %v, %v", size, signed, ok)
	}
	for _, c := range []struct {
		t    btf.Type
		want bool
	}{
		{&btf.Pointer{Target: file}, true},
		{&btf.Pointer{Target: &btf.Const{Type: char}}, true},
		{&btf.Pointer{Target: &btf.Void{}}, true},
		{&btf.Pointer{Target: &btf.Const{Type: &btf.Void{}}}, false},
		{&btf.Pointer{Target: &btf.Pointer{Target: file}}, false},
		{&btf.Pointer{Target: loff}, true},
		{loff, true},
		{file, false},
	} {
		if got := ctxReadable(c.t); got != c.want {
			t.Errorf("ctxReadable(%v) = %v, want %v", c.t, got, c.want)
		}
	}
	if _, _, ok := scalar(file); ok {
		t.Errorf("a struct passed by value is a scalar")
	}
}

func TestWiden(t *testing.T) {
	if n := len(widen(0, 8, true)); n != 0 {
		t.Errorf("widen of 8 bytes emits %d instructions", n)
	}
	if n := len(widen(0, 4, true)); n != 2 {
		t.Errorf("widen of 4 bytes emits %d instructions", n)
	}
}
