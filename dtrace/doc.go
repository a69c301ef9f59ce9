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
//		if it.Kind == output.KindPrintf {
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
// Stop fires END (call Work or Consume until done afterwards); ExitStatus
// is exit()'s value. A Handle is not safe for concurrent use.
package dtrace
