package check

import (
	"strings"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// Stability is the stability of a name or of data, from least to most
// stable (dtrace's DTRACE_STABILITY_*).
type Stability uint8

// The stability levels.
const (
	Internal Stability = iota
	Private
	Obsolete
	External
	Unstable
	Evolving
	Stable
	Standard
)

// DepClass is the dependency class of an interface, from the narrowest
// (dtrace's DTRACE_CLASS_*).
type DepClass uint8

// The dependency classes.
const (
	ClassUnknown DepClass = iota
	ClassCPU
	ClassPlatform
	ClassGroup
	ClassISA
	ClassCommon
)

// Attr is a stability attribute triple: how stable names are, how stable
// data semantics are, and the dependency class.
type Attr struct {
	Name, Data Stability
	Class      DepClass
}

// String gives the triple as dtrace writes it: "Stable/Stable/Common".
func (a Attr) String() string {
	return stabilities[a.Name] + "/" + stabilities[a.Data] + "/" + depClasses[a.Class]
}

// ParseAttr parses "name/data/class" (case-insensitive); components left
// out keep their maximum.
func ParseAttr(s string) (Attr, bool) {
	a := maxAttr
	parts := strings.Split(s, "/")
	if len(parts) > 3 || s == "" {
		return a, false
	}
	for i, p := range parts {
		if i < 2 {
			v, ok := indexFold(stabilities, p)
			if !ok {
				return a, false
			}
			if i == 0 {
				a.Name = Stability(v)
			} else {
				a.Data = Stability(v)
			}
			continue
		}
		v, ok := indexFold(depClasses, p)
		if !ok {
			return a, false
		}
		a.Class = DepClass(v)
	}
	return a, true
}

func indexFold(list []string, w string) (int, bool) {
	for i, s := range list {
		if strings.EqualFold(s, w) {
			return i, true
		}
	}
	return 0, false
}

// MinAttr returns the component-wise minimum of a and b.
func MinAttr(a, b Attr) Attr {
	return Attr{Name: min(a.Name, b.Name), Data: min(a.Data, b.Data), Class: min(a.Class, b.Class)}
}

// Less reports whether a is below b in any component.
func (a Attr) Less(b Attr) bool {
	return a.Name < b.Name || a.Data < b.Data || a.Class < b.Class
}

// Attributes dtrace gives by default.
var (
	maxAttr = Attr{Standard, Standard, ClassCommon}
	// DefaultAttr is what D's own names and C and D types have.
	DefaultAttr = Attr{Stable, Stable, ClassCommon}
	// privateAttr is that of kernel symbols and kernel types.
	privateAttr = Attr{Private, Private, ClassUnknown}
	// UnstableDescAttr is the attribute of a probe description with an
	// empty or glob provider field, or that matches no provider.
	UnstableDescAttr = Attr{Unstable, Unstable, ClassCommon}
)

// ProviderAttrs are a provider's stability attributes: those of each
// probe description field and those of its probes' arguments.
type ProviderAttrs struct {
	Provider, Module, Function, Name, Args Attr
}

// isGlob reports whether a probe description field matches more than
// one name: empty, or with glob characters.
func isGlob(s string) bool {
	return s == "" || strings.ContainsAny(s, "*?[\\")
}

// descAttr returns the attributes of a probe description as dtrace
// computes them: the provider's, lowered by those of each field given
// literally. An empty or glob provider, or one the configuration does
// not describe, is Unstable.
func (c *checker) descAttr(desc string) Attr { return DescAttr(c.conf, desc) }

// DescAttr returns the attributes of probe description desc (macros
// expanded) under conf, as the checker gives them to a clause: the
// provider's, lowered by those of each field given literally; Unstable
// for an empty or glob provider or one conf does not describe.
func DescAttr(conf *Config, desc string) Attr {
	f := splitDesc(desc)
	if isGlob(f[0]) || conf.ProviderAttrs == nil {
		return UnstableDescAttr
	}
	pa := conf.ProviderAttrs(f[0])
	if pa == nil {
		return UnstableDescAttr
	}
	a := pa.Provider
	for i, fa := range []Attr{pa.Module, pa.Function, pa.Name} {
		if !isGlob(f[i+1]) {
			a = MinAttr(a, fa)
		}
	}
	return a
}

// splitDesc splits "prov:mod:func:name" into its four fields; missing
// leading fields are empty.
func splitDesc(desc string) [4]string {
	parts := strings.Split(desc, ":")
	var f [4]string
	if len(parts) > 4 {
		parts = append(parts[:3:3], strings.Join(parts[3:], ":"))
	}
	copy(f[4-len(parts):], parts)
	return f
}

// clauseDescAttr returns the minimum of a clause's probe descriptions'
// attributes.
func (c *checker) clauseDescAttr(cl *Clause) Attr {
	if len(cl.Probes) == 0 {
		return UnstableDescAttr
	}
	a := maxAttr
	for _, d := range cl.Probes {
		a = MinAttr(a, c.descAttr(d))
	}
	return a
}

// contextAttrs returns the attributes of the provider whose probe the
// clause's first description matches: dtrace gives them to probeprov,
// probemod, probefunc, probename and args. Without one, all are
// Unstable.
func (c *checker) contextAttrs(cl *Clause) ProviderAttrs {
	if len(cl.Probes) == 0 {
		u := UnstableDescAttr
		return ProviderAttrs{u, u, u, u, u}
	}
	return ContextAttrs(c.conf, cl.Probes[0])
}

// ContextAttrs returns the attributes of the provider whose probe
// description desc (macros expanded) matches under conf: those the
// context variables (probefunc, args, ...) of a clause on it take.
// Without one, all are Unstable.
func ContextAttrs(conf *Config, desc string) ProviderAttrs {
	u := UnstableDescAttr
	none := ProviderAttrs{u, u, u, u, u}
	if conf.ProviderAttrs == nil {
		return none
	}
	prov := splitDesc(desc)[0]
	if conf.ProbeArgs != nil {
		if pi := conf.ProbeArgs(desc); pi != nil && pi.Name != "" {
			prov = splitDesc(pi.Name)[0]
		}
	}
	if isGlob(prov) {
		return none
	}
	if pa := conf.ProviderAttrs(prov); pa != nil {
		return *pa
	}
	return none
}

// Attr returns the builtin variable's attributes in a clause whose
// probe's provider has attributes ctx: its own, lowered by those it
// takes from the provider.
func (d *VarDef) Attr(ctx ProviderAttrs) Attr {
	a := DefaultAttr
	if d.attr != nil {
		a = *d.attr
	}
	if d.context != nil {
		a = MinAttr(a, d.context(ctx))
	}
	return a
}

// Attr returns the builtin function's attributes.
func (d *FuncDef) Attr() Attr {
	if d.attr != nil {
		return *d.attr
	}
	return DefaultAttr
}

// SymbolAttr is the attributes of kernel symbols and kernel types.
var SymbolAttr = privateAttr

// stmtAttr computes a checked clause's statement attributes: the
// minimum over the builtin names, kernel symbols and types, and inlines
// its predicate and actions use.
func (c *checker) stmtAttr(cl *Clause) {
	a := DefaultAttr
	ctx := c.contextAttrs(cl)
	visit := func(n syntax.Node) {
		switch n := n.(type) {
		case *syntax.Ident:
			switch o := c.info.Uses[n].(type) {
			case *Builtin:
				if d := LookupVar(o.Name); d != nil {
					a = MinAttr(a, d.Attr(ctx))
				}
			case *Symbol:
				a = MinAttr(a, privateAttr)
			case *Inline:
				if ia, ok := c.attrOf[o.Name]; ok {
					a = MinAttr(a, ia)
				}
			}
		case *syntax.CallExpr:
			if fn := c.info.Calls[n]; fn != nil {
				if d := LookupFunc(fn.Name); d != nil {
					a = MinAttr(a, d.Attr())
				}
			}
		case *syntax.TypeName:
			if t := c.info.TypeNames[n]; t != nil && IsKernelType(t) {
				a = MinAttr(a, privateAttr)
			}
		}
	}
	if cl.Pred != nil {
		syntax.Inspect(cl.Pred, func(n syntax.Node) bool { visit(n); return true })
	}
	if cl.Body != nil {
		syntax.Inspect(cl.Body, func(n syntax.Node) bool { visit(n); return true })
	}
	cl.StmtAttr = a
}

// IsKernelType reports whether t (or what it points to) is a kernel
// type rather than one of C's or D's.
func IsKernelType(t types.Type) bool {
	for i := 0; i < 8 && t != nil; i++ {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem
			continue
		case *types.Qualified:
			t = u.Type
			continue
		}
		break
	}
	mod := types.ModuleOf(t)
	return mod != "" && mod != "C" && mod != "D"
}
