// Package checktest holds what the D compiler's tests share.
package checktest

import (
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// Check parses and checks src as the script f.d (macro arguments: f.d,
// then args) whose probes are p:m:f:n with one int argument, as the fuzz
// tests do; it returns nil where src does not parse or check.
func Check(src string, args ...string) *check.Info {
	fset := syntax.NewFileSet()
	prog, _ := syntax.Parse(fset, "f.d", []byte(src), 0)
	if prog == nil {
		return nil
	}
	conf := &check.Config{
		MacroArgs: append([]string{"f.d"}, args...),
		Source:    func(string) []byte { return []byte(src) },
		ProbeArgs: func(string) *check.ProbeInfo {
			return &check.ProbeInfo{Name: "p:m:f:n", Args: []types.Type{types.Int}}
		},
	}
	info, err := check.Check(fset, []*syntax.Program{prog}, conf)
	if err != nil {
		return nil
	}
	return info
}
