//go:build linux

package dtrace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/formats"
	"github.com/dtrace-go/dtrace/output/perfetto"
	"github.com/dtrace-go/dtrace/output/text"
)

// printer is a renderer Work can point at its writer.
type printer interface {
	output.Renderer
	SetOutput(w io.Writer)
}

// errNotStarted is returned by the consuming methods before Go.
var errNotStarted = errors.New("tracing not started")

// startConsumer creates the consumer of a loaded program and the
// renderer Work uses: text, or the one -x oformat names; and the
// renderers of the other formats set (output/formats): -x prometheus
// starts serving /metrics, -x otlp exporting.
func (h *Handle) startConsumer(plan *loader.Plan) error {
	set := h.settings()
	h.cons = consumer.New(consumer.Config{
		Spec: h.spec,
		EPID: func(epid uint32) (uint32, int, bool) {
			ep, ok := plan.EPID(epid)
			return ep.ProbeID, ep.Clause, ok
		},
		Program:  h.objs,
		Probes:   lockedProbes{h},
		Waiting:  h.consumerWaiting,
		Buffers:  h.bufs,
		KeySizes: h.aggKeySizes(),
		Settings: set,
		Setopt:   h.setopt,
		Sym:      h.sym,
		Target:   h.conf.Target,
	})
	tc := text.Config{
		Stderr:   h.conf.Stderr,
		Testing:  h.conf.Testing,
		Settings: set,
		Sym:      h.sym,
		Target:   h.conf.Target,
	}
	h.text = text.New(tc)
	h.out = h.text
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	env := output.Env{Stderr: tc.Stderr, Testing: tc.Testing, Settings: set, Sym: h.sym, Target: tc.Target,
		Param: h.opts.outputParam, Names: h.ThreadNames, Version: version(), Kernel: unix.ByteSliceToString(uts.Release[:]),
		Text: func(stderr io.Writer) output.Printer {
			c := tc
			if stderr != nil {
				c.Stderr = stderr
			}
			return text.New(c)
		}}
	if f := formats.Streaming(h.opts.OFormat); f != nil && f != &text.Format {
		r, err := f.New(env)
		if err != nil {
			return err
		}
		p, ok := r.(printer)
		if !ok {
			return fmt.Errorf("-x oformat=%s: the renderer cannot be pointed at an output", f.Name)
		}
		h.out = p
	}
	for _, f := range h.opts.outputsOn() {
		e := env
		e.Dest = h.opts.Outputs[f.Option]
		r, err := f.New(e)
		if err != nil {
			return err
		}
		if s, ok := r.(output.Server); ok {
			h.servers = append(h.servers, s)
		} else {
			h.atExit = append(h.atExit, r)
		}
		if f.Records != nil && f.Records(h.opts.outputParam) {
			h.out = &teeRenderer{printer: h.out, also: r}
		}
	}
	return nil
}

// ThreadNames names a thread (its process and itself) for a timeline:
// by the names the kernel reported while records are stamped (which
// outlive the process), else from /proc, or for a process already gone
// (a short -c target) its executable as the symbolizer saw it.
func (h *Handle) ThreadNames(pid, tid int) (string, string) {
	var proc, thread string
	if h.bufs != nil {
		proc, thread = h.bufs.Comm(pid), h.bufs.Comm(tid)
	}
	if proc == "" || thread == "" {
		p, t := output.ProcNames(pid, tid)
		proc, thread = cmp.Or(proc, p), cmp.Or(thread, t)
	}
	if proc == "" {
		if p, err := h.sym.Process(pid); err == nil && p.Exe != "" {
			proc = filepath.Base(p.Exe)
		}
	}
	return proc, thread
}

// Structured reports whether the output format (-x oformat) is other than
// dtrace(1M)'s text: then standard output carries that format's objects
// only, and reports meant for people, such as -v's, belong on stderr.
func (h *Handle) Structured() bool { return h.opts.OFormat != "text" }

// Settings are the output settings the options give at the start, for a
// renderer a Consume caller makes.
func (h *Handle) Settings() output.Settings { return h.settings() }

// Symbolizer resolves kernel and user addresses, for a renderer a
// Consume caller makes.
func (h *Handle) Symbolizer() format.Symbolizer { return h.sym }

// Timeline is the -x oformat=perfetto renderer, once Go has started
// tracing; nil for other output. Events of other machines are added to
// it.
func (h *Handle) Timeline() *perfetto.Renderer {
	t, _ := h.baseOut().(*perfetto.Renderer)
	return t
}

// textOutput reports whether output is dtrace(1M)'s text, which alone
// gets the newlines Run prints around the output.
func (h *Handle) textOutput() bool { return h.out == nil || h.baseOut() == printer(h.text) }

// Work consumes what the buffers hold, waiting up to one switchrate for
// data, and writes output to w as dtrace(1M) prints it (errors and
// drops go to Config.Stderr). It reports done once exit() was called or
// Stop ran and everything has been consumed; under a switchrate the end
// may wait one switchrate more, as dtrace-utils' does (consumer.Work).
func (h *Handle) Work(w io.Writer) (bool, error) {
	if h.cons == nil {
		return false, errNotStarted
	}
	for _, s := range h.servers {
		// Requests read the aggregations here, between passes, so that
		// they never race the consumer.
		if err := s.Serve(h.cons.FinalAggregations); err != nil {
			return false, err
		}
	}
	h.out.SetOutput(w)
	return h.consume(h.out)
}

// consume runs one pass of the consumer, after bringing the probes of
// the followed processes in step with what they map (follow_linux.go);
// a rescan from a held process waits for the pass.
func (h *Handle) consume(r output.Renderer) (bool, error) {
	if f := h.follow; f != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
		h.followChanges()
		f.inPass = true
		defer func() { f.inPass = false }()
	}
	return h.cons.Work(r)
}

// Snapshot writes what the buffers hold now to w (where Work writes),
// after a header line naming the snapshot's number, time and cause:
// under bufpolicy=ring the newest records of every CPU in time order,
// under switch and fill what is buffered now. Tracing goes on. Call it
// between Work calls (dtrace(1M) does on SIGUSR1).
func (h *Handle) Snapshot(w io.Writer, cause string) error {
	if h.cons == nil {
		return errNotStarted
	}
	h.text.SetOutput(w)
	return h.cons.Snapshot(h.text, cause)
}

// Consume is Work for a Go program that takes the decoded events
// itself: the records, faults, errors and drops go to r rather than
// being printed. Call it until it reports done, then Aggregations for
// the aggregations' final values.
func (h *Handle) Consume(r output.Renderer) (bool, error) {
	if h.cons == nil {
		return false, errNotStarted
	}
	return h.consume(r)
}

// Aggregations reads every aggregation and hands them to r (Renderer's
// Aggregations), as at exit.
func (h *Handle) Aggregations(r output.Renderer) error {
	if h.cons == nil {
		return errNotStarted
	}
	return h.cons.Aggregations(r)
}

// PrintAggregations prints, at exit, the aggregations printa() did not.
// dtrace(1M) calls it after its final newline.
func (h *Handle) PrintAggregations(w io.Writer) error { return h.printAggregations(w, nil) }

// printAggregations is PrintAggregations with the aggregations passed
// through merge first, when set.
func (h *Handle) printAggregations(w io.Writer, merge func([]*aggregate.Agg) []*aggregate.Agg) error {
	if h.cons == nil {
		return nil
	}
	aggs, err := h.cons.FinalAggregations()
	if err != nil {
		h.stopServers(nil, nil)
		return err
	}
	var machines []string
	if merge != nil {
		aggs = merge(aggs)
		machines = []string{"host"}
		for _, g := range h.opts.Guests {
			name, _, _ := strings.Cut(g, "=")
			machines = append(machines, name)
		}
	}
	// Tracing is over: the final values are printed, not served; an
	// exporter sends them before it stops.
	h.stopServers(aggs, machines)
	if !h.textOutput() {
		h.out.SetOutput(w)
		err = h.out.Aggregations(aggs)
	} else {
		err = h.text.PrintAggregations(w, aggs)
	}
	if err != nil {
		return err
	}
	return h.writeStackFiles(aggs)
}

// stopServers stops the Serving formats' renderers, handing them the
// final aggregations (see output.Server's Stop).
func (h *Handle) stopServers(final []*aggregate.Agg, machines []string) error {
	var errs []error
	for _, s := range h.servers {
		errs = append(errs, s.Stop(final, machines))
	}
	h.servers = nil
	return errors.Join(errs...)
}

// writeStackFiles hands the final aggregations to the formats that
// write at exit (-x pprof, -x flamegraph), in registry order.
func (h *Handle) writeStackFiles(aggs []*aggregate.Agg) error {
	for _, r := range h.atExit {
		if err := r.Aggregations(aggs); err != nil {
			return err
		}
	}
	return nil
}

// Output returns where output meant for w goes: the file freopen() named
// while one is in effect, else w. dtrace(1M) prints its closing newline
// and the final aggregations there.
func (h *Handle) Output(w io.Writer) io.Writer {
	if h.cons != nil && h.cons.Reopened() != nil {
		return h.cons.Reopened()
	}
	return w
}

// ExitStatus is the value given to exit(), or 0.
func (h *Handle) ExitStatus() int {
	if h.cons == nil {
		return 0
	}
	return h.cons.ExitStatus()
}

// Stop ends tracing: Work (or Consume), which must then be called until
// done, delivers what was recorded before and fires END.
func (h *Handle) Stop() error {
	if h.cons == nil {
		return nil
	}
	return h.cons.Stop()
}

// settings are the options the consumer and the renderers honour.
func (h *Handle) settings() output.Settings {
	o := h.opts
	return output.Settings{
		Quiet:      o.Quiet,
		FlowIndent: o.FlowIndent,
		RawBytes:   o.RawBytes,
		DropTags:   o.DropTags,
		StrSize:    int(o.StrSize),
		PrintSize:  int(o.PrintSize),
		AggSort: aggregate.SortOptions{
			Key:    o.AggSortKey,
			Rev:    o.AggSortRev,
			KeyPos: int(max(o.AggSortKeyPos, 0)),
			Pos:    int(max(o.AggSortPos, 0)),
		},
		AggView:    o.aggView(),
		SpecSize:   o.SpecSize,
		SwitchRate: h.rate("switchrate"),
		AggRate:    h.rate("aggrate"),
		StatusRate: h.rate("statusrate"),
		NoResolve:  o.NoResolve,
		AggPerCPU:  o.AggPerCPU,
		CPUs:       h.aggCPUs(),
	}
}

// aggCPUs are the CPUs whose values aggpercpu prints: the online ones.
func (h *Handle) aggCPUs() []int {
	if !h.opts.AggPerCPU {
		return nil
	}
	cpus, _ := kernel.OnlineCPUs()
	return cpus
}

// aggView is the agghist, aggpack, aggzoom and encoding options as the
// aggregation printer takes them. Without an encoding, packed bars are
// Unicode blocks unless TERM names a terminal dtrace knows cannot show
// them (sun, sun-color, dumb) or is unset.
func (o *Options) aggView() aggregate.View {
	packUTF8 := o.Encoding == "utf8"
	if o.Encoding == "" {
		switch os.Getenv("TERM") {
		case "", "sun", "sun-color", "dumb":
		default:
			packUTF8 = true
		}
	}
	return aggregate.View{
		Hist:     o.AggHist,
		Pack:     o.AggPack,
		Zoom:     o.AggZoom,
		UTF8:     o.Encoding == "utf8",
		PackUTF8: packUTF8,
	}
}

// rate is the interval of rate option name (switchrate, aggrate or
// statusrate) as the consumer honours it: 0, no limit, unless the option
// was set (dtrace's defaults for the first two are 0; its 1 Hz statusrate
// default would make every exit() wait, so ours looks at each pass).
func (h *Handle) rate(name string) time.Duration {
	if !h.opts.IsSet(name) {
		return 0
	}
	v := h.opts.SwitchRate
	switch name {
	case "aggrate":
		v = h.opts.AggRate
	case "statusrate":
		v = h.opts.StatusRate
	}
	return time.Duration(max(v, 0))
}

// setopt applies setopt() for the consumer, as dtrace checks it.
func (h *Handle) setopt(name, val string, hasVal bool) (output.Settings, error) {
	if err := h.opts.CheckSetopt(name, val, hasVal); err != nil {
		return output.Settings{}, err
	}
	if hasVal {
		_ = h.opts.SetValue(name, val)
	} else {
		_ = h.opts.Set(name, "")
	}
	return h.settings(), nil
}

// aggKeySizes gives, per aggregation, the D size of each key (integer
// keys are stored 8 bytes wide but print as their type).
func (h *Handle) aggKeySizes() [][]int {
	out := make([][]int, len(h.spec.Aggs))
	for i, a := range h.spec.Aggs {
		if a == nil || a.ID >= len(h.info.Aggs) {
			continue
		}
		for _, kt := range h.info.Aggs[a.ID].Keys {
			out[i] = append(out[i], int(kt.Size()))
		}
	}
	return out
}
