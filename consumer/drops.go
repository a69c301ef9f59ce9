package consumer

import "fmt"

// DropKind says which buffer lost data; the names are dtrace's drop tags.
type DropKind int

// Drop kinds reported per CPU.
const (
	DropPrincipal DropKind = iota
	DropAggregation
)

// Tag returns the drop tag printed under -xdroptags.
func (k DropKind) Tag() string {
	if k == DropAggregation {
		return "DTRACEDROP_AGGREGATION"
	}
	return "DTRACEDROP_PRINCIPAL"
}

// Drop is a count of records lost on one CPU since the last report.
type Drop struct {
	CPU   int
	Kind  DropKind
	Count uint64
}

// Message words the drop as dtrace(1M) does, without the "dtrace: "
// prefix and newline: "1 drop on CPU 0", "3 aggregation drops on CPU 1",
// with "[DTRACEDROP_PRINCIPAL] " in front when tags (the droptags option)
// is set.
func (d Drop) Message(tags bool) string {
	s := ""
	if tags {
		s = "[" + d.Kind.Tag() + "] "
	}
	kind := ""
	if d.Kind == DropAggregation {
		kind = "aggregation "
	}
	plural := ""
	if d.Count > 1 {
		plural = "s"
	}
	return s + fmt.Sprintf("%d %sdrop%s on CPU %d", d.Count, kind, plural, d.CPU)
}
