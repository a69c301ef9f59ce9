// Package tracetest runs D programs in-process through the dtrace library,
// with extra providers, for the tests of the user-level providers; and
// loads hand-built programs and reads their records, for the tests of
// the kernel side.
package tracetest

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/perf"

	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/program"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/provider"
)

type named struct {
	provider.Provider
	name string
}

func (n named) Name() string { return n.name }

// Maps forwards the maps the provider's prologues use (provider.Mapper).
func (n named) Maps(p *provider.Probe) []provider.HashMap {
	if m, ok := n.Provider.(provider.Mapper); ok {
		return m.Maps(p)
	}
	return nil
}

// ReadCookie forwards how the provider's programs read the attach cookie
// (provider.CookieReader).
func (n named) ReadCookie(p *provider.Probe) asm.Instructions {
	if c, ok := n.Provider.(provider.CookieReader); ok {
		return c.ReadCookie(p)
	}
	return nil
}

// Named presents p under the name of one process's provider (pid1234,
// myprov1234), which the Registry compares literally with a description's
// provider field.
func Named(p provider.Provider, name string) provider.Provider { return named{p, name} }

// Trace compiles src with the extra providers, for the process target,
// calls run while tracing, then stops and returns the output, the final
// aggregations included. Any error fails the test.
func Trace(t testing.TB, target int, src string, run func(), provs ...provider.Provider) string {
	t.Helper()
	return trace(t, dtrace.Config{Target: target}, src, run, provs)
}

// TraceStderr is Trace without extra providers that also returns what
// the library wrote to its stderr (drops, run-time errors).
func TraceStderr(t testing.TB, src string, run func()) (out, stderr string) {
	t.Helper()
	var e bytes.Buffer
	out = trace(t, dtrace.Config{Stderr: &e}, src, run, nil)
	return out, e.String()
}

func trace(t testing.TB, cfg dtrace.Config, src string, run func(), provs []provider.Provider) string {
	t.Helper()
	h := compileWith(t, cfg, src, provs)
	defer h.Close()
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

// Compile compiles src with the extra providers, for the process target,
// and returns the handle, not yet tracing (Go); any error fails the test.
// The handle is closed when the test ends.
func Compile(t testing.TB, target int, src string, provs ...provider.Provider) *dtrace.Handle {
	t.Helper()
	h := compile(t, target, src, provs)
	t.Cleanup(func() { h.Close() })
	return h
}

func compile(t testing.TB, target int, src string, provs []provider.Provider) *dtrace.Handle {
	t.Helper()
	return compileWith(t, dtrace.Config{Target: target}, src, provs)
}

func compileWith(t testing.TB, cfg dtrace.Config, src string, provs []provider.Provider) *dtrace.Handle {
	t.Helper()
	h, err := dtrace.Open(dtrace.NewOptions(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range provs {
		h.Registry().Add(p)
	}
	if _, err := h.Compile(dtrace.Source{Name: "test", Text: src}); err != nil {
		h.Close()
		t.Fatal(err)
	}
	return h
}

// Load plans spec with the providers of reg and loads it, logging the
// verifier's complaints; the objects are closed when the test ends.
func Load(t testing.TB, spec *program.Spec, reg *provider.Registry) (*loader.Objects, *loader.Plan) {
	t.Helper()
	plan, err := loader.NewPlan(spec, reg, loader.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o, err := loader.Load(spec, plan, loader.Options{})
	if err != nil {
		var ve *loader.VerifierError
		if errors.As(err, &ve) {
			t.Logf("verifier log:\n%s", strings.Join(ve.Log, "\n"))
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, plan
}

// ReadRecords reads records from rd until none has come for idle.
func ReadRecords(t testing.TB, rd *perf.Reader, idle time.Duration) []perf.Record {
	t.Helper()
	var recs []perf.Record
	for {
		rd.SetDeadline(time.Now().Add(idle))
		r, err := rd.Read()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}
