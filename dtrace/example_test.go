//go:build linux

package dtrace_test

import (
	"fmt"
	"os"

	"github.com/dtrace-go/dtrace/dtrace"
)

// Count system calls by program name for a second and print the counts.
// (Needs root; the example is compiled, not run, by go test.)
func Example() {
	opts := dtrace.NewOptions()
	if err := opts.Set("quiet", ""); err != nil {
		panic(err)
	}
	h, err := dtrace.Open(opts, dtrace.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer h.Close()
	_, err = h.Compile(dtrace.Source{Name: "count", Text: `
		syscall:::entry { @[execname] = count(); }
		tick-1s { exit(0); }`})
	if err == nil {
		err = h.Go()
	}
	for done := false; err == nil && !done; {
		done, err = h.Work(os.Stdout)
	}
	if err == nil {
		err = h.PrintAggregations(os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
