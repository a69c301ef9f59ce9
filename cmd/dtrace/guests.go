package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dtrace-go/dtrace/agent"
	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/perfetto"
)

// forwarded reports whether a -x option goes to the guests' agents:
// all but those that choose this dtrace's output or its guests.
func forwarded(name string) bool {
	switch name {
	case "agent", "guest", "oformat", "pprof", "flamegraph", "prometheus", "promlabels":
		return false
	}
	return true
}

// serveAgent is -x agent=DEVICE: serve one host, then exit.
func (c *cmdline) serveAgent() int {
	if err := kernel.CheckPrivileges(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	dev, err := agent.OpenDevice(c.opts.Agent)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer dev.Close()
	if err := agent.Serve(dev, c.stderr); err != nil {
		c.errorf("agent: %v", err)
		return exitError
	}
	return exitSuccess
}

// guests is the host's side of -x guest: the guests' connections and
// where their output goes.
type guests struct {
	c       *cmdline
	list    []*agent.Guest
	mux     *mux
	tl      *perfetto.Renderer
	stopped bool
}

// startGuests connects to every -x guest, sends each the programs and
// the options, and waits until they trace.
func (c *cmdline) startGuests() (*guests, error) {
	gs := &guests{c: c}
	var p agent.Program
	for _, cmd := range c.cmds {
		s := cmd.prog.Source
		p.Sources = append(p.Sources, agent.Source{Name: s.Name, Text: s.Text, Kind: int(s.Kind),
			Script: s.Script, MacroArgs: s.MacroArgs})
	}
	p.Options = c.forward
	for _, spec := range c.opts.Guests {
		name, sock, _ := strings.Cut(spec, "=")
		g, err := agent.Dial(name, sock, perfetto.Monotonic)
		if err == nil {
			var n int
			if n, err = g.Start(p); err == nil {
				c.notice("guest %s: matched %d probe%s", name, n, plural(n))
			}
		}
		if err != nil {
			gs.stop()
			return nil, err
		}
		gs.list = append(gs.list, g)
	}
	return gs, nil
}

// run starts receiving from the guests: their records go to the
// timeline when there is one, else as text to out with a machine column
// (the host's own output too: it returns the writer the host prints to).
func (gs *guests) run(h *dtrace.Handle, out io.Writer) io.Writer {
	gs.tl = h.Timeline()
	for _, g := range gs.list {
		if gs.tl != nil {
			gs.tl.SetMachine(g.Name, nil)
		}
	}
	if gs.tl == nil {
		names := []string{"host"}
		for _, g := range gs.list {
			names = append(names, g.Name)
		}
		gs.mux = newMux(out, names)
		out = gs.mux.writer("host")
	}
	for _, g := range gs.list {
		go g.Run(gs, 200*time.Millisecond)
	}
	return out
}

// Record places one guest record: on the timeline, or as its text.
func (gs *guests) Record(g *agent.Guest, r *agent.Record) {
	if gs.tl != nil {
		gs.tl.Add(&perfetto.Event{Machine: g.Name, Time: r.Time, PID: r.PID, TID: r.TID, CPU: r.CPU,
			Process: r.Process, Thread: r.Thread, Clause: r.Clause, Actions: r.Actions,
			Probe: output.Probe{ID: r.Probe.ID, Provider: r.Probe.Provider, Module: r.Probe.Module,
				Function: r.Probe.Function, Name: r.Probe.Name}})
		return
	}
	gs.mux.writer(g.Name).Write([]byte(r.Text))
}

// Message prints a guest's fault, error or drop message, naming it.
func (gs *guests) Message(g *agent.Guest, text string) {
	fmt.Fprint(gs.c.stderr, strings.Replace(text, "dtrace: ", "dtrace: guest "+g.Name+": ", 1))
}

// stop stops every guest and returns their aggregations.
func (gs *guests) stop() []agent.MachineAggs {
	if gs.stopped {
		return nil
	}
	gs.stopped = true
	var out []agent.MachineAggs
	for _, g := range gs.list {
		aggs, _, err := g.Stop(time.Minute)
		if err != nil {
			gs.c.errorf("%v", err)
		}
		out = append(out, agent.MachineAggs{Machine: g.Name, Aggs: aggs})
		off, bound, n := g.Clock.Estimate()
		if gs.tl != nil {
			gs.tl.SetMachine(g.Name, map[string]any{"clock_offset_ns": off, "clock_error_bound_ns": bound,
				"clock_samples": n, "clock_drift_ns_per_s": g.Clock.Rate()})
		}
		if gs.c.verbose > 0 || gs.c.opts.Verbose {
			gs.c.errorf("guest %s: clock offset %d ns, error bound %d ns, drift %.0f ns/s (%d samples)",
				g.Name, off, bound, g.Clock.Rate(), n)
		}
	}
	return out
}

// merge is the host's hook on its final aggregations: it stops the
// guests, ends the machine column, and keys every aggregation by
// machine.
func (gs *guests) merge(aggs []*aggregate.Agg) []*aggregate.Agg {
	guestAggs := gs.stop()
	if gs.mux != nil {
		gs.mux.end()
	}
	return agent.Merge("host", aggs, guestAggs)
}

// mux interleaves the text of several machines, line by line, each line
// after its machine's name in a column as wide as the longest.
type mux struct {
	mu    sync.Mutex
	w     io.Writer
	width int
	raw   bool
	ws    map[string]*lineWriter
}

func newMux(w io.Writer, names []string) *mux {
	m := &mux{w: w, ws: map[string]*lineWriter{}}
	for _, n := range names {
		m.width = max(m.width, len(n))
		m.ws[n] = &lineWriter{m: m, name: n}
	}
	return m
}

func (m *mux) writer(name string) *lineWriter { return m.ws[name] }

// end writes what is left of every machine's last line and lets what
// follows (the aggregations, keyed by machine) through unchanged.
func (m *mux) end() {
	for _, lw := range m.ws {
		if len(lw.buf) > 0 {
			lw.Write([]byte("\n"))
		}
	}
	m.mu.Lock()
	m.raw = true
	m.mu.Unlock()
}

// lineWriter is one machine's writer into a mux.
type lineWriter struct {
	m    *mux
	name string
	buf  []byte
}

// Write writes the complete lines of p after the machine's name; empty
// lines stay empty.
func (lw *lineWriter) Write(p []byte) (int, error) {
	m := lw.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.raw {
		return m.w.Write(p)
	}
	lw.buf = append(lw.buf, p...)
	var b bytes.Buffer
	for {
		i := bytes.IndexByte(lw.buf, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			fmt.Fprintf(&b, "%-*s  ", m.width, lw.name)
		}
		b.Write(lw.buf[:i+1])
		lw.buf = lw.buf[i+1:]
	}
	if b.Len() > 0 {
		if _, err := m.w.Write(b.Bytes()); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
