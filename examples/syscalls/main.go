// Command syscalls embeds the dtrace library and takes its events rather
// than its text: it runs a command, counts the system calls it makes by
// name and the bytes it asks write(2) to write, and prints the most
// frequent calls in its own format.
//
//	syscalls [-top N] command [arg ...]
//
// It drives tracing itself with Consume (an output.Renderer receives the
// decoded records) and Stop, and reads the final aggregation with
// Aggregations. The command's output goes to standard error, leaving
// standard output to the report. It needs root, as tracing does.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/examples/internal/excmd"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// script counts the target's system calls in @calls and records the
// size of each write as a printf() item.
const script = excmd.CountCalls + `syscall::write:entry /pid == $target/ { printf("%d", arg2); }
`

// collector is the renderer: it keeps what it needs from the events and
// ignores the rest (output.Nop).
type collector struct {
	output.Nop
	written int64
	calls   map[string]int64
}

// Item sums the write sizes that the printf() items carry.
func (c *collector) Item(r *output.Record, it *output.Item) error {
	if it.Kind == program.ActPrintf && len(it.Args) == 1 {
		if n, ok := it.Args[0].(program.Int); ok {
			c.written += n.Int64()
		}
	}
	return nil
}

// Aggregations reads @calls's final counts.
func (c *collector) Aggregations(aggs []*aggregate.Agg) error {
	for _, a := range aggs {
		if strings.TrimPrefix(a.Desc.Name, "@") != "calls" {
			continue
		}
		for _, e := range a.Entries() {
			name, _ := e.Key[0].(program.String)
			if n, ok := a.Result(e).(program.Int); ok {
				c.calls[string(name)] += n.Int64()
			}
		}
	}
	return nil
}

func main() {
	top, argv := excmd.Args("syscalls")
	c, err := trace(argv)
	excmd.Check("syscalls", err)
	report(os.Stdout, c, top)
}

// trace runs the command argv under tracing until it exits and returns what the
// collector gathered.
func trace(argv []string) (*collector, error) {
	proc, err := dtrace.CreateProcess(argv, os.Stdin, os.Stderr, os.Stderr)
	if err != nil {
		return nil, err
	}
	defer proc.Abandon()
	h, err := dtrace.Open(dtrace.NewOptions(), dtrace.Config{Target: proc.Pid()})
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if _, err := h.Compile(dtrace.Source{Name: "syscalls", Text: script}); err != nil {
		return nil, err
	}
	if err := h.Go(); err != nil {
		return nil, err
	}
	proc.Continue() // probes are on: let the command run
	c := &collector{calls: map[string]int64{}}
	stopped := false
	for done := false; !done; {
		select {
		case <-proc.Exited():
			if !stopped {
				// Stop fires END; Consume then drains what is left.
				if err := h.Stop(); err != nil {
					return nil, err
				}
				stopped = true
			}
		default:
		}
		if done, err = h.Consume(c); err != nil {
			return nil, err
		}
	}
	return c, h.Aggregations(c)
}

// report prints the top system calls, most frequent first, and the bytes
// written.
func report(w io.Writer, c *collector, top int) {
	names := make([]string, 0, len(c.calls))
	for n := range c.calls {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if c.calls[names[i]] != c.calls[names[j]] {
			return c.calls[names[i]] > c.calls[names[j]]
		}
		return names[i] < names[j]
	})
	if len(names) > top {
		names = names[:top]
	}
	fmt.Fprintf(w, "%-20s %8s\n", "SYSCALL", "COUNT")
	for _, n := range names {
		fmt.Fprintf(w, "%-20s %8d\n", n, c.calls[n])
	}
	fmt.Fprintf(w, "bytes written: %d\n", c.written)
}
