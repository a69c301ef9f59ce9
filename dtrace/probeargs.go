package dtrace

import (
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/types"
	"github.com/dtrace-go/dtrace/provider"
)

// argTyper is a provider that knows the C types of its probes' arguments.
type argTyper interface {
	ArgTypes(p *provider.Probe) ([]string, error)
}

// xargTyper is a provider whose probes' arguments a D program sees
// translated: the types it sees ("psinfo_t *"), "" where the native type
// stays. Their native types may be kernel types ("struct task_struct *"),
// which the translators of the D library take.
type xargTyper interface {
	XArgTypes(p *provider.Probe) ([]string, error)
}

// probeArgs is the checker's ProbeArgs hook: the argument types of the
// first probe a description matches, when its provider knows them.
func (h *Handle) probeArgs(desc string) *check.ProbeInfo {
	probes, err := h.match(desc)
	if err != nil || len(probes) == 0 {
		return nil
	}
	p := probes[0]
	names := h.ArgTypes(p)
	if names == nil {
		return nil
	}
	info := &check.ProbeInfo{Name: p.String()}
	var kern types.Lookup
	if xt, ok := p.Owner.(xargTyper); ok {
		if x, err := xt.XArgTypes(p); err == nil && x != nil {
			info.XArgs = x
			if h.kern != nil {
				kern = h.kern
			}
		}
	}
	for _, n := range names {
		info.Args = append(info.Args, parseArgType(n, kern))
	}
	return info
}

// cTypeScopes resolve the base names of argument types.
var cTypeScopes = []*types.Scope{types.CScope(), types.DScope(256), types.FallbackScope()}

// parseArgType turns a C type as a provider writes it ("const char *",
// "unsigned int", "struct stat *", "size_t") into a D type. Names it does
// not know become opaque; pointers to them stay pointers, so that
// copyin() and friends accept them. With kern, names found in no C scope
// are looked up among the kernel's types.
func parseArgType(s string, kern types.Lookup) types.Type {
	s = strings.TrimSpace(s)
	stars := strings.Count(s, "*")
	base := strings.TrimSpace(strings.ReplaceAll(s, "*", " "))
	var words []string
	for _, w := range strings.Fields(base) {
		switch w {
		case "const", "volatile", "restrict", "__user":
			continue
		}
		words = append(words, w)
	}
	name := strings.Join(words, " ")
	switch name {
	case "long int":
		name = "long"
	case "long unsigned int", "unsigned long int":
		name = "unsigned long"
	case "long long int":
		name = "long long"
	case "long long unsigned int", "unsigned long long int":
		name = "unsigned long long"
	case "short int":
		name = "short"
	case "short unsigned int", "unsigned short int":
		name = "unsigned short"
	}
	var t types.Type
	for _, sc := range cTypeScopes {
		if t = sc.Lookup(name); t != nil {
			break
		}
	}
	if t == nil && kern != nil {
		t = kern.LookupType("", name)
	}
	if t == nil {
		if stars == 0 {
			// An unknown scalar (a kernel typedef): the size of a
			// register.
			return types.Long
		}
		t = types.NewOpaque(name)
	}
	for i := 0; i < stars; i++ {
		t = types.NewPointer(t)
	}
	return t
}

// ListArgTypes returns the types of a probe's arguments as dtrace -lv
// shows them: translated where the provider translates them.
func (h *Handle) ListArgTypes(p *provider.Probe) []string {
	names := h.ArgTypes(p)
	xt, ok := p.Owner.(xargTyper)
	if !ok || names == nil {
		return names
	}
	x, err := xt.XArgTypes(p)
	if err != nil || x == nil {
		return names
	}
	out := append([]string(nil), names...)
	for i := range out {
		if i < len(x) && x[i] != "" {
			out[i] = x[i]
		}
	}
	return out
}

// ArgTypes returns the C types of a probe's arguments as its provider
// describes them, or nil when it does not know them.
func (h *Handle) ArgTypes(p *provider.Probe) []string {
	at, ok := p.Owner.(argTyper)
	if !ok {
		return nil
	}
	names, err := at.ArgTypes(p)
	if err != nil {
		return nil
	}
	return names
}
