package provider

import (
	"fmt"
	"strings"
)

// Desc is a probe description: four glob patterns, an empty one matching
// anything.
type Desc struct {
	Provider, Module, Function, Name string
}

// Field says which probe field the last component of a description names,
// as dtrace's -P, -m, -f and -n options do.
type Field int

// The fields, from the left.
const (
	FieldProvider Field = iota
	FieldModule
	FieldFunction
	FieldName
)

// DescError is a malformed probe description. Its text follows dtrace:
// `invalid probe description "x": Overspecified probe description`.
type DescError struct {
	Spec   string
	Reason string
}

func (e *DescError) Error() string {
	return fmt.Sprintf("invalid probe description %q: %s", e.Spec, e.Reason)
}

// ParseDesc parses a description whose last component is the probe name:
// "name", "func:name", "mod:func:name" or "prov:mod:func:name".
func ParseDesc(s string) (Desc, error) {
	return ParseDescField(s, FieldName)
}

// ParseDescField parses a description whose rightmost component is the
// given field; components fill the fields from the right, and more
// components than fields to the left of last is an error. An empty first
// component is not one of them (dtrace reads the fields from the right
// and stops at the start of the text): -f ::read: names function "" of
// module read.
func ParseDescField(s string, last Field) (Desc, error) {
	parts := strings.Split(s, ":")
	if len(parts) > int(last)+1 && parts[0] == "" {
		parts = parts[1:]
	}
	if len(parts) > int(last)+1 {
		return Desc{}, &DescError{Spec: s, Reason: "Overspecified probe description"}
	}
	var f [4]string
	first := int(last) + 1 - len(parts)
	copy(f[first:], parts)
	return Desc{Provider: f[0], Module: f[1], Function: f[2], Name: f[3]}, nil
}

// DtraceOnly reports whether d is BEGIN, END or ERROR alone (no
// provider, module or function field): a description that names the
// dtrace provider's probe. The providers that make probes from what a
// process maps (pid, USDT) take it to name none of theirs, so that a
// program of BEGIN and END clauses reads no object of its -c or -p
// process.
func (d Desc) DtraceOnly() bool {
	if d.Provider != "" || d.Module != "" || d.Function != "" {
		return false
	}
	return d.Name == "BEGIN" || d.Name == "END" || d.Name == "ERROR"
}

// String gives the description in its full four-field form, as dtrace
// quotes it in messages ("::BEGIN:tick-1").
func (d Desc) String() string {
	return d.Provider + ":" + d.Module + ":" + d.Function + ":" + d.Name
}

// Matches reports whether the probe p is described by d.
func (d Desc) Matches(p *Probe) bool {
	return Match(d.Provider, p.Provider) && d.MatchesIn(p.Module, p.Function, p.Name)
}

// MatchesIn reports whether module, function and name match d, ignoring
// the provider field; providers use it to filter their own probes.
func (d Desc) MatchesIn(module, function, name string) bool {
	return Match(d.Name, name) && Match(d.Function, function) && Match(d.Module, module)
}
