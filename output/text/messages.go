package text

import (
	"fmt"

	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
)

// Fault prints a fault as dtrace's default ERROR handler does:
// "dtrace: error in dt_clause_N for probe ID P (desc): what (details)
// at BPF pc X".
func (t *Renderer) Fault(f *output.Fault) error {
	name := f.Name
	if name == "" {
		name = "unknown fault"
	}
	details := ""
	switch f.Code {
	case abi.FltBadAddr:
		if int64(f.Addr) != -1 {
			details = fmt.Sprintf(" (0x%x)", f.Addr)
		}
	case abi.FltBadAlign, abi.FltBadStack, abi.FltBadSize:
		details = fmt.Sprintf(" (0x%x)", f.Addr)
	case abi.FltBadIndex:
		details = fmt.Sprintf(" (%d)", int64(f.Addr))
	}
	where := ""
	if f.PC != -1 {
		where = fmt.Sprintf(" at BPF pc %d", f.PC)
	}
	pdesc := "::::"
	if f.Known {
		pdesc = f.Probe.String()
	}
	// The records before a message are written before it.
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(t.stderr, "dtrace: error in dt_clause_%d for probe ID %d (%s): %s%s%s\n",
		f.Clause, f.Probe.ID, pdesc, name, details, where)
	return err
}

// Error prints a library-level error of a clause.
func (t *Renderer) Error(e *output.Error) error {
	pdesc, id := ":::", uint32(0)
	if e.Known {
		pdesc, id = e.Probe.String(), e.Probe.ID
	}
	// The records before a message are written before it.
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(t.stderr, "dtrace: error in dt_clause_%d for probe ID %d (%s): %s\n", e.Clause, id, pdesc, e.Msg)
	return err
}

// Drop prints a drop report as dtrace(1M) words it.
func (t *Renderer) Drop(d *output.Drop) error {
	// The records before a message are written before it.
	if err := t.flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(t.stderr, "dtrace: %s\n", DropMessage(d, t.set.DropTags))
	return err
}

// dropWords are dtrace's words for the drops counted over all CPUs.
var dropWords = map[output.DropKind]struct{ what, suffix string }{
	output.DropDynamic:     {"dynamic variable drop", ""},
	output.DropSpec:        {"speculative drop", ""},
	output.DropSpecBusy:    {"failed speculation", " (available buffer(s) still busy)"},
	output.DropSpecUnavail: {"failed speculation", " (no speculative buffer available)"},
	output.DropFlow:        {"flow variable drop", ""},
}

// DropMessage words a drop as dtrace(1M) does, without the "dtrace: "
// prefix and newline: "1 drop on CPU 0", "3 aggregation drops on CPU 1",
// "2 dynamic variable drops", with "[DTRACEDROP_PRINCIPAL] " in front
// when tags (the droptags option) is set.
func DropMessage(d *output.Drop, tags bool) string {
	s := ""
	if tags {
		s = "[" + d.Kind.Tag() + "] "
	}
	plural := ""
	if d.Count > 1 {
		plural = "s"
	}
	if d.Kind.PerCPU() {
		kind := ""
		if d.Kind == output.DropAggregation {
			kind = "aggregation "
		}
		return s + fmt.Sprintf("%d %sdrop%s on CPU %d", d.Count, kind, plural, d.CPU)
	}
	w := dropWords[d.Kind]
	s += fmt.Sprintf("%d %s%s%s", d.Count, w.what, plural, w.suffix)
	if len(s) > 79 {
		// dtrace builds the message in an 80-byte buffer; the cut
		// message then gets the error text of the last errno.
		s = s[:79] + ": No such process"
	}
	return s
}

// Snapshot prints the header line of a snapshot: its number, time and
// cause, in the output the records go to.
func (t *Renderer) Snapshot(s *output.Snapshot) error {
	fmt.Fprintf(&t.b, "=== snapshot %d at %s by %s ===\n", s.N, s.Time.UTC().Format("2006 Jan _2 15:04:05.000000000 UTC"), s.Cause)
	return t.flush()
}
