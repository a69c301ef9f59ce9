package fbt

import (
	"fmt"
	"strings"
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
	pv.parseFunctions([]byte(sample), false)
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

func TestParseFunctionAddresses(t *testing.T) {
	pv := New()
	pv.once.Do(func() {})
	pv.parseFunctions([]byte(`ffffffff81001000 vfs_read
ffffffff81002000 show_stat
ffffffff81003000 __ftrace_invalid_address___64
ffffffff81004000 show_stat
ffffffff81004000 show_stat
ffffffffc0001000 show_stat [nfs]
ffffffffc0002000 nfs_read_folio [nfs]
`), true)
	want := []function{{"vmlinux", "vfs_read"}, {"vmlinux", "show_stat"}, {"nfs", "show_stat"}, {"nfs", "nfs_read_folio"}}
	if len(pv.funcs) != len(want) {
		t.Fatalf("got %v, want %v", pv.funcs, want)
	}
	for i, w := range want {
		if pv.funcs[i] != w {
			t.Errorf("function %d: got %v, want %v", i, pv.funcs[i], w)
		}
	}
	// Both copies of vmlinux's static show_stat, its address listed
	// twice kept once; the module's own.
	for i, w := range [][]uintptr{{0xffffffff81001000}, {0xffffffff81002000, 0xffffffff81004000}, {0xffffffffc0001000}, {0xffffffffc0002000}} {
		if got := pv.addresses(i); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("addresses of %v: %x, want %x", pv.funcs[i], got, w)
		}
	}
	ps, err := pv.Probes(provider.Desc{Function: "show_stat", Name: "entry"})
	if err != nil || len(ps) != 2 {
		t.Fatalf("Probes: %v, %v", ps, err)
	}
	if !pv.needAddresses(ps) || pv.needAddresses(ps[:0]) {
		t.Errorf("needAddresses: a static function with two copies and a module's function need addresses; none, not")
	}
	// kallsyms: vfs_read starts where the tracer patches; the first
	// show_stat with an ENDBR64 (4 bytes) before it, the second not
	// (a symbol at the address itself wins).
	pv.start, pv.startErr = readStarts(strings.NewReader(`ffffffff81001000 T vfs_read
ffffffff81001ffc t show_stat
ffffffff81003ffc t other
ffffffff81004000 t show_stat
ffffffff81005000 d data
ffffffffc0000ffc t show_stat	[nfs]
`), pv.addrs, pv.more)
	pv.startOnce.Do(func() {})
	addrs, cookies, ok := pv.multiByAddress(ps, []uint64{7, 9})
	if !ok || fmt.Sprint(addrs) != fmt.Sprint([]uintptr{0xffffffff81001ffc, 0xffffffff81004000, 0xffffffffc0000ffc}) ||
		fmt.Sprint(cookies) != "[7 7 9]" {
		t.Errorf("kprobe.multi: addresses %x, cookies %v (%v, %v)", addrs, cookies, ok, pv.startErr)
	}
	if _, err := readStarts(strings.NewReader("0000000000000000 T vfs_read\n"), pv.addrs, pv.more); err == nil {
		t.Error("kallsyms without addresses (kptr_restrict) taken for starts")
	}
	// Without addresses (available_filter_functions), none.
	if got := fake().addresses(0); got != nil {
		t.Errorf("addresses without a listing of them: %x", got)
	}
}

func TestSharedNames(t *testing.T) {
	pv := New()
	pv.parseFunctions([]byte("dummy_handler\nvfs_read\ndummy_handler\ndummy_handler\nshow_stat [nfs]\nshow_stat\n"), false)
	i := pv.byName["dummy_handler"]
	if len(i) != 1 || pv.shared[i[0]] != 2 {
		t.Errorf("dummy_handler: indexes %v, further copies %v: want one function with 2 more", i, pv.shared)
	}
	for _, name := range []string{"vfs_read", "show_stat"} {
		for _, j := range pv.byName[name] {
			if pv.shared[j] != 0 {
				t.Errorf("%s (%s): %d further copies, want none", name, pv.funcs[j].mod, pv.shared[j])
			}
		}
	}
	// Names with addresses (6.5 and later) go to kprobe.multi by address.
	pv.parseFunctions([]byte("ffffffff81000010 dummy_handler\nffffffff81000020 dummy_handler\n"), true)
	if pv.shared != nil {
		t.Errorf("shared with addresses: %v", pv.shared)
	}
}
