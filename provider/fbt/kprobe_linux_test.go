package fbt

import (
	"slices"
	"strings"
	"testing"
)

func TestReadSymbolAddrs(t *testing.T) {
	const kallsyms = `ffffffff81000010 t dummy_handler
ffffffff81000020 T vfs_read
ffffffff81000030 t dummy_handler
ffffffff81000040 d dummy_handler
ffffffffc0000050 t dummy_handler	[snd]
ffffffffc0000060 t show_stat	[nfs]
ffffffff81000070 t show_stat
`
	want := map[function]bool{{Kernel, "dummy_handler"}: true, {"nfs", "show_stat"}: true, {"snd", "absent"}: true}
	got, err := readSymbolAddrs(strings.NewReader(kallsyms), want)
	if err != nil {
		t.Fatal(err)
	}
	if a := got[function{Kernel, "dummy_handler"}]; !slices.Equal(a, []uint64{0xffffffff81000010, 0xffffffff81000030}) {
		t.Errorf("vmlinux dummy_handler: %x, want its two text copies (not the data symbol, not snd's)", a)
	}
	if a := got[function{"nfs", "show_stat"}]; !slices.Equal(a, []uint64{0xffffffffc0000060}) {
		t.Errorf("nfs show_stat: %x, want the module's copy only", a)
	}
	if len(got) != 2 {
		t.Errorf("got %d functions, want 2: %v", len(got), got)
	}
	var hidden strings.Builder
	for _, line := range strings.SplitAfter(kallsyms, "\n") {
		if len(line) > 16 {
			line = "0000000000000000" + line[16:]
		}
		hidden.WriteString(line)
	}
	if _, err := readSymbolAddrs(strings.NewReader(hidden.String()), want); err == nil {
		t.Error("kallsyms with addresses hidden (kptr_restrict): no error")
	}
}
