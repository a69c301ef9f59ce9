package agent

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/perfetto"
)

// HostConfig says which guests a host runs a program in and how it
// reports on them.
type HostConfig struct {
	// Guests are the -x guest values, NAME=SOCKET.
	Guests []string
	// Program is what each guest compiles and runs.
	Program Program
	// Stderr takes the guests' fault, error and drop messages.
	Stderr io.Writer
	// Errorf prints an error after "dtrace: "; Notice a notice (quiet
	// drops it).
	Errorf, Notice func(format string, a ...any)
	// Verbose reports each guest's clock mapping at the end.
	Verbose bool
}

// holdRecords is how long a guest's records wait for the clock samples
// after them before they go on a timeline (Guest.Hold).
const holdRecords = 10 * time.Second

// Host is the host's side of -x guest: the guests' connections and
// where their output goes.
type Host struct {
	cfg     HostConfig
	list    []*Guest
	mux     *mux
	tl      *perfetto.Renderer
	stopped bool
}

// StartHost connects to every guest, sends each the program and the
// options, and waits until they trace.
func StartHost(cfg HostConfig) (*Host, error) {
	gs := &Host{cfg: cfg}
	for _, spec := range cfg.Guests {
		name, sock, _ := strings.Cut(spec, "=")
		g, err := Dial(name, sock, output.Monotonic)
		if err == nil {
			var n int
			if n, err = g.Start(cfg.Program); err == nil {
				plural := "s"
				if n == 1 {
					plural = ""
				}
				cfg.Notice("guest %s: matched %d probe%s", name, n, plural)
			}
		}
		if err != nil {
			gs.Stop()
			return nil, err
		}
		gs.list = append(gs.list, g)
	}
	return gs, nil
}

// Run starts receiving from the guests: their records go to the
// timeline tl when there is one, else as text to out with a machine
// column (the host's own output too: it returns the writer the host
// prints to).
func (gs *Host) Run(tl *perfetto.Renderer, out io.Writer) io.Writer {
	gs.tl = tl
	for _, g := range gs.list {
		if gs.tl != nil {
			gs.tl.SetMachine(g.Name, nil)
			// Records are placed on the timeline by the clock mapping
			// of the samples around them: they are held a while.
			g.Hold = holdRecords
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
		go g.Run(gs, pingInterval)
	}
	return out
}

// Record places one guest record: on the timeline, or as its text.
func (gs *Host) Record(g *Guest, r *Record) {
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
func (gs *Host) Message(g *Guest, text string) {
	fmt.Fprint(gs.cfg.Stderr, strings.Replace(text, "dtrace: ", "dtrace: guest "+g.Name+": ", 1))
}

// Stop stops every guest and returns their aggregations.
func (gs *Host) Stop() []MachineAggs {
	if gs.stopped {
		return nil
	}
	gs.stopped = true
	var out []MachineAggs
	for _, g := range gs.list {
		aggs, _, err := g.Stop(time.Minute)
		if err != nil {
			gs.cfg.Errorf("%v", err)
		}
		out = append(out, MachineAggs{Machine: g.Name, Aggs: aggs})
		off, bound, n := g.Clock.Estimate()
		if gs.tl != nil {
			gs.tl.SetMachine(g.Name, map[string]any{"clock_offset_ns": off, "clock_error_bound_ns": bound,
				"clock_samples": n, "clock_drift_ns_per_s": g.Clock.Rate()})
		}
		if gs.cfg.Verbose {
			gs.cfg.Errorf("guest %s: clock offset %d ns, error bound %d ns, drift %.0f ns/s (%d samples)",
				g.Name, off, bound, g.Clock.Rate(), n)
		}
	}
	return out
}

// Merge is the host's hook on its final aggregations: it stops the
// guests, ends the machine column, and keys every aggregation by
// machine.
func (gs *Host) Merge(aggs []*aggregate.Agg) []*aggregate.Agg {
	guestAggs := gs.Stop()
	if gs.mux != nil {
		gs.mux.end()
	}
	return Merge("host", aggs, guestAggs)
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
