package prom

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

func TestChecks(t *testing.T) {
	for _, a := range []string{"10.0.0.1:9000", "0.0.0.0:9000", ":9000", "example.com:80", "127.0.0.1"} {
		if ln, err := Listen(a); err == nil {
			ln.Close()
			t.Errorf("%s accepted", a)
		}
	}
	// Any address that can be listened on passes CheckAddr; Exposure
	// then wants a web configuration for a non-loopback one.
	for a, loop := range map[string]bool{"127.0.0.1:0": true, "[::1]:0": true, "localhost:0": true, "0.0.0.0:0": false, ":0": false} {
		if err := CheckAddr(a); err != nil && a != "[::1]:0" {
			t.Errorf("CheckAddr(%s): %v", a, err)
		}
		if Loopback(a) != loop || (Exposure(a, "") == nil) != loop || Exposure(a, "web.yml") != nil {
			t.Errorf("%s: Loopback %v, Exposure %v", a, Loopback(a), Exposure(a, ""))
		}
	}
	if CheckAddr("127.0.0.1") == nil || CheckAddr("no.such.host.invalid:80") == nil {
		t.Errorf("bad addresses accepted")
	}
	if err := CheckAddr("127.0.0.1:0"); err != nil {
		t.Errorf("127.0.0.1:0: %v", err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if CheckAddr(ln.Addr().String()) == nil {
		t.Errorf("busy %s accepted", ln.Addr())
	}
	for s, ok := range map[string]bool{"func": true, "func,pid": true, "a b": false, "": false, "__x": false, "1a": false, "a,": false} {
		if (CheckLabels(s) == nil) != ok {
			t.Errorf("labels %q: %v", s, CheckLabels(s))
		}
	}
}

// TestScrape serves synthetic aggregations: the scrape is answered by
// Serve (the consumer's side), names, labels and histogram buckets are
// as documented.
func TestScrape(t *testing.T) {
	calls := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
	calls.Add(nil, []int64{5000})
	byFunc := aggregate.New(&aggregate.Desc{ID: 1, Name: "@", Func: program.AggSum})
	byFunc.Add([]program.Value{program.String("read"), program.I32(-1)}, []int64{7})
	q := aggregate.New(&aggregate.Desc{ID: 2, Name: "@lat-ns", Func: program.AggQuantize})
	slots := make([]int64, q.Desc.NSlots())
	for _, v := range []int64{1, 5, 6, 100} {
		q.Desc.Update(slots, v, 1)
	}
	q.Add([]program.Value{program.String("x")}, slots)

	s, err := Start("127.0.0.1:0", []string{"func"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			s.Serve(func() ([]*aggregate.Agg, error) { return []*aggregate.Agg{calls, byFunc, q}, nil })
		}
	}()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		"# TYPE dtrace_calls gauge\ndtrace_calls 5000\n",
		`dtrace_agg{func="read",key1="-1"} 7`,
		"# TYPE dtrace_lat_ns histogram\n",
		`dtrace_lat_ns_bucket{func="x",le="1"} 1`,
		`dtrace_lat_ns_bucket{func="x",le="7"} 3`,
		`dtrace_lat_ns_bucket{func="x",le="127"} 4`,
		`dtrace_lat_ns_bucket{func="x",le="+Inf"} 4`,
		`dtrace_lat_ns_count{func="x"} 4`,
		`dtrace_lat_ns_sum{func="x"} 73`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	// Once closed (tracing over), nothing is served.
	s.Close()
	if _, err := http.Get("http://" + s.Addr() + "/metrics"); err == nil {
		t.Errorf("served after Close")
	}
}

// TestNative: a quantize() entry is a classic histogram and, with the
// same counts, a native one of schema 0, each bucket at the power of two
// that bounds it; lquantize() stays classic.
func TestNative(t *testing.T) {
	q := aggregate.New(&aggregate.Desc{ID: 0, Name: "@q", Func: program.AggQuantize})
	slots := make([]int64, q.Desc.NSlots())
	for _, v := range []int64{1, 5, 6, 100, 0, -3} {
		q.Desc.Update(slots, v, 1)
	}
	q.Add(nil, slots)
	l := aggregate.New(&aggregate.Desc{ID: 1, Name: "@l", Func: program.AggLquantize, Base: 0, Levels: 10, Step: 10})
	lslots := make([]int64, l.Desc.NSlots())
	l.Desc.Update(lslots, 15, 1)
	l.Add(nil, lslots)
	ms := (&Server{}).Metrics([]*aggregate.Agg{q, l})
	if len(ms) != 2 {
		t.Fatalf("%d metrics, want 2", len(ms))
	}
	var m dto.Metric
	if err := ms[0].Write(&m); err != nil {
		t.Fatal(err)
	}
	h := m.GetHistogram()
	spans := func(ss []*dto.BucketSpan) (out [][2]int) {
		for _, s := range ss {
			out = append(out, [2]int{int(s.GetOffset()), int(s.GetLength())})
		}
		return out
	}
	// 1 in (1/2, 1]: index 0; 5 and 6 in (4, 8]: 3; 100 in (64, 128]: 7;
	// -3 in [-4, -2): negative index 2; 0 in the zero bucket.
	if h.GetSchema() != 0 || h.GetZeroCount() != 1 || h.GetSampleCount() != 6 ||
		fmt.Sprint(spans(h.PositiveSpan), h.PositiveDelta) != "[[0 1] [2 1] [3 1]] [1 1 -1]" ||
		fmt.Sprint(spans(h.NegativeSpan), h.NegativeDelta) != "[[2 1]] [1]" || len(h.Bucket) == 0 {
		t.Errorf("quantize: %v", h)
	}
	m.Reset()
	if err := ms[1].Write(&m); err != nil {
		t.Fatal(err)
	}
	if h := m.GetHistogram(); h.Schema != nil || len(h.PositiveSpan) != 0 || len(h.Bucket) == 0 {
		t.Errorf("lquantize: %v", h)
	}
}
