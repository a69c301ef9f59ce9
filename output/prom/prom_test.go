package prom

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

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

	s := serve(t, func() []*aggregate.Agg { return []*aggregate.Agg{calls, byFunc, q} })
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

// serve starts a Server on a loopback port whose keys' first label is
// func, and answers its scrapes with read's aggregations until the test
// ends, as the consumer does between passes over the buffers.
func serve(t *testing.T, read func() []*aggregate.Agg) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", []string{"func"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		s.Close()
	})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			s.Serve(func() ([]*aggregate.Agg, error) { return read(), nil })
		}
	}()
	return s
}
