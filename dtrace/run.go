//go:build linux

package dtrace

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output/formats"
)

// RunConfig says what, besides exit() in the program, ends a Run.
type RunConfig struct {
	// Interrupt delivers the caller's stop requests (SIGINT and SIGTERM
	// for dtrace(1M)): the first stops tracing, END runs and what was
	// recorded is printed; a second abandons the output. Nil: none.
	Interrupt <-chan os.Signal
	// Snapshot delivers snapshot requests (SIGUSR1 for dtrace(1M)):
	// each writes what the buffers hold (Handle.Snapshot) and tracing
	// goes on. Nil: none.
	Snapshot <-chan os.Signal
	// Processes are continued when Run starts; once all have exited,
	// tracing stops (dtrace -c and -p).
	Processes []*Process
	// Aggregations, when set, is handed the final aggregations and
	// returns those to print instead (-x guest merges the guests' in,
	// keyed by machine). It is called once tracing has ended.
	Aggregations func([]*aggregate.Agg) []*aggregate.Agg
}

// Run drives tracing, started by Go, to its end the way dtrace(1M) does:
// it calls Work until done, calling Stop when interrupted or when every
// process of rc is gone, then writes the closing newline and the
// aggregations that printa() did not print, where freopen() last sent
// the output meant for w. It returns the program's exit status; an error
// is worded for printing after "dtrace: ".
func (h *Handle) Run(w io.Writer, rc RunConfig) (int, error) {
	// A process's addresses resolve with what it mapped up to its exit,
	// and a timeline (stamped records: perfetto, json, OTLP, an agent)
	// names a short -c process gone by then by the executable that
	// snapshot saw (ThreadNames). A program that does neither takes no
	// snapshot.
	snap := h.spec != nil && userAddresses(h.spec) || h.conf.Stamp || h.opts.stamps()
	for _, p := range rc.Processes {
		if snap {
			p.AtExit(func(pid int) { _, _ = h.sym.Snapshot(pid) })
		}
		h.followProcess(p)
		p.Continue()
	}
	interrupted, stopped := 0, false
	var interruptedAt time.Time
	quiesced := false
	for done := false; !done; {
		newline := false
		select {
		case <-rc.Interrupt:
			interrupted++
			newline = interrupted == 1
			if interrupted == 1 {
				interruptedAt = time.Now()
			}
			if h.cons != nil {
				h.cons.Hurry()
			}
		case <-rc.Snapshot:
			if err := h.Snapshot(w, "signal USR1"); err != nil {
				return 1, fmt.Errorf("snapshot failed: %v", err)
			}
		default:
		}
		if interrupted > 1 {
			// Impatient: a second signal abandons the output.
			return h.ExitStatus(), nil
		}
		if newline && !h.conf.Testing && h.textOutput() {
			// dtrace prints a newline on interrupt so that output starts
			// on a clean line; not in testing mode, where its position
			// would vary.
			fmt.Fprintln(h.Output(w))
		}
		if interrupted > 0 && h.cons != nil && !quiesced {
			// Recording ends now; what the buffers hold still goes out,
			// for at most signalDrain, before END.
			if err := h.cons.Quiesce(); err != nil {
				return 1, fmt.Errorf("couldn't stop tracing: %v", err)
			}
			quiesced = true
		}
		if quiesced && time.Since(interruptedAt) > signalDrain && h.cons.Pending() {
			// A signal stops dtrace within a second, as it stops
			// dtrace(1M), whether tracing was still on or was ending
			// already (an exit(), the processes gone) with a backlog
			// to deliver: what a flood of records left in the buffers
			// is dropped, and reported as drops.
			h.cons.DropBacklog()
		}
		if !stopped && (quiesced && !h.cons.Pending() ||
			interrupted > 0 && h.cons == nil || allExited(rc.Processes)) {
			if err := h.Stop(); err != nil {
				return 1, fmt.Errorf("couldn't stop tracing: %v", err)
			}
			stopped = true
		}
		var err error
		if done, err = h.Work(w); err != nil {
			return 1, fmt.Errorf("processing aborted: %v", err)
		}
	}
	out := h.Output(w)
	if h.textOutput() {
		fmt.Fprintln(out)
	}
	if err := h.printAggregations(out, rc.Aggregations); err != nil {
		return 1, fmt.Errorf("failed to print aggregations: %v", err)
	}
	return h.ExitStatus(), nil
}

// signalDrain is how long, after a signal, the records already in the
// buffers are still delivered before the rest is dropped.
const signalDrain = 400 * time.Millisecond

// SignalRunConfig is the RunConfig of dtrace(1M) for the processes ps:
// SIGINT and SIGTERM stop tracing, SIGUSR1 takes a snapshot. Call stop
// when the run is over to let the signals be again.
func SignalRunConfig(ps []*Process) (rc RunConfig, stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	snaps := make(chan os.Signal, 1)
	signal.Notify(snaps, syscall.SIGUSR1)
	return RunConfig{Interrupt: sigs, Snapshot: snaps, Processes: ps}, func() {
		signal.Stop(sigs)
		signal.Stop(snaps)
	}
}

// EnablingContext returns a context for GoContext that ends at the first
// stop request rc.Interrupt delivers, so that a SIGINT while thousands of
// probes attach one by one is not left waiting for them, and makes
// rc.Interrupt a channel that still hands that request, and each later
// one, to Run. A nil rc.Interrupt gives a context that never ends. A
// goroutine forwards the requests for as long as the channel it was
// given stays open (signal.Notify's channel: for the whole process).
func EnablingContext(rc *RunConfig) context.Context {
	if rc.Interrupt == nil {
		return context.Background()
	}
	ctx, cancel := context.WithCancel(context.Background())
	in, out := rc.Interrupt, make(chan os.Signal, cap(rc.Interrupt)+1)
	go func() {
		for s := range in {
			cancel()
			select {
			case out <- s:
			default: // Run has requests enough unread.
			}
		}
	}()
	rc.Interrupt = out
	return ctx
}

// OpenOutput opens path for -o: appended to, as dtrace does, but
// created anew for a format whose output is one object that appending
// would spoil (output.Format.Truncate: the perfetto timeline). The error
// is worded for printing after "dtrace: ".
func OpenOutput(path, oformat string) (*os.File, error) {
	mode := os.O_WRONLY | os.O_APPEND | os.O_CREATE
	if f := formats.Streaming(oformat); f != nil && f.Truncate {
		mode = os.O_WRONLY | os.O_TRUNC | os.O_CREATE
	}
	f, err := os.OpenFile(path, mode, 0o666)
	if err != nil {
		return nil, fmt.Errorf("failed to open output file '%s': %s", path, Strerror(err))
	}
	return f, nil
}

// Revision is the commit the binary was built from, when Go recorded it.
func Revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}
