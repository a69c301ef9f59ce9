package dtrace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/provider"
)

// WriteListHeader writes the column titles of dtrace -l.
func WriteListHeader(w io.Writer) {
	fmt.Fprintf(w, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME")
}

// WriteList writes the probes that p's descriptions match (every probe
// when p is nil) as dtrace -l lists them, one line each in id order;
// verbose adds each probe's stability and argument types (-lv). It
// returns how many probes it wrote; a *NoMatchError names the
// descriptions that matched nothing.
func (h *Handle) WriteList(w io.Writer, p *Program, verbose bool) (int, error) {
	probes, err := h.List(p)
	var none *NoMatchError
	if err != nil && !errors.As(err, &none) {
		return 0, err
	}
	// One write per line would be 80,000 system calls for fbt.
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	w = bw
	for _, q := range probes {
		fmt.Fprintf(w, "%5d %10s %17s %33s %s\n", q.ID, q.Provider, q.Module, q.Function, q.Name)
		if verbose {
			h.writeProbeDetail(w, q)
		}
	}
	return len(probes), err
}

// listAttrs are the stability attributes -lv prints per provider: the
// probe description's, then the arguments'. Other providers get
// listDefaultAttrs.
var (
	listAttrs = map[string][2]check.Attr{
		"dtrace":  {stableCommon, stableCommon},
		"profile": {evolvingCommon, evolvingCommon},
		"syscall": {evolvingCommon, privateISA},
		"rawtp":   {privateUnknown, privateISA},
	}
	listDefaultAttrs = [2]check.Attr{privateUnknown, evolvingISA}
)

// writeProbeDetail writes the -lv block of one probe: its stability and
// the types of its arguments.
func (h *Handle) writeProbeDetail(w io.Writer, q *provider.Probe) {
	a, ok := listAttrs[q.Provider]
	if !ok {
		a = listDefaultAttrs
	}
	writeAttr(w, "Probe Description Attributes", a[0])
	writeAttr(w, "Argument Attributes", a[1])
	fmt.Fprintf(w, "\n\tArgument Types\n")
	args := h.ListArgTypes(q)
	if len(args) == 0 {
		fmt.Fprintf(w, "\t\tNone\n")
	}
	for i, t := range args {
		fmt.Fprintf(w, "\t\targs[%d]: %s\n", i, t)
	}
	fmt.Fprintln(w)
}

// writeAttr writes one titled block of stability attributes.
func writeAttr(w io.Writer, title string, a check.Attr) {
	words := strings.SplitN(a.String(), "/", 3)
	fmt.Fprintf(w, "\n\t%s\n\t\tIdentifier Names: %s\n\t\tData Semantics:   %s\n\t\tDependency Class: %s\n",
		title, words[0], words[1], words[2])
}

// WriteStability writes dtrace -v's report on p: the least stability
// attributes of its probe descriptions and of its statements, followed,
// when the program was compiled but not enabled (-e), by the
// description of each of its clauses.
func (p *Program) WriteStability(w io.Writer, enabled bool) {
	fmt.Fprintf(w, "\nStability attributes for %s %s:\n", p.Source.Noun(), p.Source.Label())
	writeAttr(w, "Minimum Probe Description Attributes", p.DescAttr)
	writeAttr(w, "Minimum Statement Attributes", p.StmtAttr)
	if enabled {
		fmt.Fprintln(w)
		return
	}
	for _, d := range p.Probes {
		fmt.Fprintf(w, "\n%s\n", d)
	}
}

// List returns the probes a program's descriptions match, or every probe
// when p is nil, in id order. A description that matches nothing (a
// listing compiles with -Z) makes the error a *NoMatchError, returned
// with the probes the others matched.
func (h *Handle) List(p *Program) ([]*provider.Probe, error) {
	if p == nil {
		return h.reg.List()
	}
	seen := map[uint32]bool{}
	var out []*provider.Probe
	var none *NoMatchError
	for _, d := range p.Probes {
		ps, err := h.match(d)
		if err != nil {
			return nil, err
		}
		if len(ps) == 0 {
			if none == nil {
				none = &NoMatchError{}
			}
			none.Descs = append(none.Descs, fullDesc(d))
		}
		for _, q := range ps {
			if !seen[q.ID] {
				seen[q.ID] = true
				out = append(out, q)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if none != nil {
		return out, none
	}
	return out, nil
}

// NoMatchError names the descriptions of a listing that matched no probe,
// in their full four-field form (":foobar::").
type NoMatchError struct {
	Descs []string
}

func (e *NoMatchError) Error() string {
	lines := make([]string, len(e.Descs))
	for i, d := range e.Descs {
		lines[i] = "failed to match " + d + ": No probe matches description"
	}
	return strings.Join(lines, "\n")
}
