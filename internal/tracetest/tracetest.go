// Package tracetest runs D programs in-process through the dtrace library,
// with extra providers, for the tests of the user-level providers.
package tracetest

import (
	"bytes"
	"testing"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/provider"
)

type named struct {
	provider.Provider
	name string
}

func (n named) Name() string { return n.name }

// Named presents p under the name of one process's provider (pid1234,
// myprov1234), which the Registry compares literally with a description's
// provider field.
func Named(p provider.Provider, name string) provider.Provider { return named{p, name} }

// Trace compiles src with the extra providers, for the process target,
// calls run while tracing, then stops and returns the output, the final
// aggregations included. Any error fails the test.
func Trace(t testing.TB, target int, src string, run func(), provs ...provider.Provider) string {
	t.Helper()
	h, err := dtrace.Open(dtrace.NewOptions(), dtrace.Config{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, p := range provs {
		h.Registry().Add(p)
	}
	if _, err := h.Compile(dtrace.Source{Name: "test", Text: src}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
	run()
	var out bytes.Buffer
	// Work before Stop: the library writes records drained by Stop to the
	// writer Work was given.
	if _, err := h.Work(&out); err != nil {
		t.Fatal(err)
	}
	if err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		done, err := h.Work(&out)
		if err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	if err := h.PrintAggregations(&out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
