// Package dtrace is the library behind dtrace(1M): D programs compiled
// to eBPF, loaded, attached, and their records consumed.
//
// A session is a Handle:
//
//	h, err := dtrace.Open(dtrace.NewOptions(), dtrace.Config{})
//	defer h.Close()
//	_, err = h.Compile(dtrace.Source{Name: "prog", Text: `syscall::read:entry { @[execname] = count(); }`})
//	err = h.Go()                 // load, attach, fire BEGIN
//	for done := false; !done; {  // until exit() or Stop and drained
//		done, err = h.Work(os.Stdout)
//	}
//	err = h.PrintAggregations(os.Stdout)
//
// Work prints what dtrace(1M) prints (output/text). A Go program that
// wants the data rather than the text calls Consume with an
// output.Renderer instead: it receives each record of a probe firing as
// an output.Record (probe, CPU, clause) and its items as typed
// output.Items (printf()'s format and argument values, trace()'s value,
// stacks as program counters, printa()'s aggregation snapshot with typed
// keys and values, exit()'s status, ...), faults, library errors and
// drops as their own events, and, from Aggregations, every
// aggregation's final value. Embed output.Nop to implement only what is
// needed:
//
//	type counter struct{ output.Nop; n int }
//
//	func (c *counter) Item(r *output.Record, it *output.Item) error {
//		if it.Kind == program.ActPrintf {
//			c.n++
//		}
//		return nil
//	}
//
//	for done := false; !done; {
//		done, err = h.Consume(c)
//	}
//	err = h.Aggregations(c)
//
// Stop ends tracing (call Work or Consume until done afterwards: they
// deliver what was recorded before, then fire END and deliver its
// records); ExitStatus is exit()'s value. Each Work or Consume call
// delivers for a bounded time (a tenth of a second), so that a caller
// acts on a signal promptly however fast records come. A Handle is not
// safe for concurrent use.
//
// Options are dtrace(1M)'s: NewOptions gives its defaults and
// Options.Set takes what -x takes (Set("quiet", ""), Set("bufsize",
// "8m")). Run drives a started Handle to its end as the dtrace command
// does: Work until done, Stop once the processes traced have exited or
// on an interrupt (after at most 400 ms of delivering what the buffers
// hold; the rest is dropped and reported as drops), then the closing
// newline and the aggregations; a second interrupt ends it at once.
// CreateProcess and GrabProcess give such processes (dtrace -c and -p),
// the first one's pid being Config.Target ($target):
//
//	p, err := dtrace.CreateProcess([]string{"ls", "/"}, os.Stdin, os.Stdout, os.Stderr)
//	defer p.Abandon()
//	h, err := dtrace.Open(opts, dtrace.Config{Target: p.Pid()})
//	...
//	err = h.Go()
//	status, err := h.Run(os.Stdout, dtrace.RunConfig{Processes: []*dtrace.Process{p}})
//
// Tracing needs root (or CAP_BPF and CAP_PERFMON). The repository's
// examples directory holds complete programs that embed the library.
package dtrace
