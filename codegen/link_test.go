package codegen

import (
	"errors"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// symbolKernel knows two kernel variables: jiffies in vmlinux and
// nf_conntrack_max in a module.
type symbolKernel struct{}

func (symbolKernel) LookupType(module, name string) types.Type { return nil }

func (symbolKernel) LookupSymbol(module, name string) (*check.Symbol, bool) {
	switch name {
	case "jiffies":
		return &check.Symbol{Module: "vmlinux", Name: name, Addr: 0xffffffff81000000, Type: types.UnsignedLong}, true
	case "nf_conntrack_max":
		return &check.Symbol{Module: "nf_conntrack", Name: name, Addr: 0xffffffffc0001000, Type: types.UnsignedInt}, true
	}
	return nil, false
}

// TestSymbolLink checks the link policies of linkmode: kernel symbols are
// compiled in, or refused with D_ASRELO as relocations that remain.
func TestSymbolLink(t *testing.T) {
	tests := []struct {
		src  string
		link SymbolLink
		want string // "" when generation succeeds
	}{
		{"BEGIN { trace(`jiffies); }", LinkStatic, ""},
		{"BEGIN { trace(`nf_conntrack_max); }", LinkStatic, ""},
		{"BEGIN { trace(`jiffies); }", LinkPrimary, ""},
		{"BEGIN { trace(`nf_conntrack_max); }", LinkPrimary, "relocation remains against kernel symbol nf_conntrack`nf_conntrack_max (offset 0x"},
		{"BEGIN { trace(`jiffies); }", LinkDynamic, "relocation remains against kernel symbol vmlinux`jiffies (offset 0x"},
		{"BEGIN { x = 1;\n trace((uint64_t)&`jiffies); }", LinkDynamic, "relocation remains against kernel symbol vmlinux`jiffies (offset 0x"},
		{"BEGIN { trace(1); }", LinkDynamic, ""},
	}
	for _, tt := range tests {
		fset := syntax.NewFileSet()
		prog, err := syntax.Parse(fset, "test.d", []byte(tt.src), 0)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.src, err)
		}
		info, err := check.Check(fset, []*syntax.Program{prog}, &check.Config{Kernel: symbolKernel{}})
		if err != nil {
			t.Fatalf("check %q: %v", tt.src, err)
		}
		_, err = Generate(info, Options{Link: tt.link})
		if tt.want == "" {
			if err != nil {
				t.Errorf("%q link %d: %v", tt.src, tt.link, err)
			}
			continue
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Tag != "D_ASRELO" || !strings.HasPrefix(ce.Error(), tt.want) {
			t.Errorf("%q link %d: got %v, want D_ASRELO %q", tt.src, tt.link, err, tt.want)
			continue
		}
		if line := fset.Position(ce.Pos).Line; line != strings.Count(tt.src, "\n")+1 {
			t.Errorf("%q: error at line %d", tt.src, line)
		}
	}
}
