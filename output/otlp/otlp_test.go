package otlp

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

func TestExpIndex(t *testing.T) {
	for _, c := range []struct {
		lo, hi int64
		i      int32
		pos    bool
		zero   bool
	}{
		{0, 0, 0, false, true},
		{1, 1, -1, true, false},
		{2, 3, 1, true, false},
		{4, 7, 2, true, false},
		{1 << 40, 1<<41 - 1, 40, true, false},
		{1 << 62, 1<<63 - 1, 62, true, false},
		{-1, -1, -1, false, false},
		{-3, -2, 1, false, false},
		{-7, -4, 2, false, false},
		{-1 << 63, -1<<62 - 1, 62, false, false},
	} {
		i, pos, zero := ExpIndex(c.lo, c.hi)
		if i != c.i || pos != c.pos || zero != c.zero {
			t.Errorf("[%d, %d]: %d %v %v, want %d %v %v", c.lo, c.hi, i, pos, zero, c.i, c.pos, c.zero)
		}
		// The bucket holds the quantize bucket's bound of greatest
		// magnitude: (2^i, 2^(i+1)].
		if !zero {
			m := uint64(c.hi)
			if !pos {
				m = uint64(-c.lo)
			}
			if lo, hi := pow2(i), pow2(i+1); !(float64(m) > lo && float64(m) <= hi) {
				t.Errorf("[%d, %d]: bucket %d is (%g, %g], not holding %d", c.lo, c.hi, i, lo, hi, m)
			}
		}
	}
}

func pow2(i int32) float64 {
	f := 1.0
	for ; i > 0; i-- {
		f *= 2
	}
	for ; i < 0; i++ {
		f /= 2
	}
	return f
}

// quantized is a quantize() aggregation of vals, keyed by one string.
func quantized(vals []int64) *aggregate.Agg {
	q := aggregate.New(&aggregate.Desc{ID: 0, Name: "@q", Func: program.AggQuantize})
	slots := make([]int64, q.Desc.NSlots())
	for _, v := range vals {
		q.Desc.Update(slots, v, 1)
	}
	q.Add([]program.Value{program.String("k")}, slots)
	return q
}

// TestQuantizeExp: the exponential histogram of a quantize() holds its
// counts bucket for bucket under ExpIndex, zero and negatives included.
func TestQuantizeExp(t *testing.T) {
	var vals []int64
	for i := int64(-300); i < 4700; i++ {
		vals = append(vals, i*i*i%100000)
	}
	q := quantized(vals)
	en := q.Entries()[0]
	p := expHistogram(q, en)
	if p.count != uint64(len(vals)) || p.scale != 0 {
		t.Fatalf("count %d scale %d, want %d 0", p.count, p.scale, len(vals))
	}
	got := map[string]uint64{"zero": p.zeroCount}
	for side, b := range map[string]*expBuckets{"+": p.positive, "-": p.negative} {
		if b == nil {
			continue
		}
		for j, n := range b.counts {
			if n != 0 {
				got[fmt.Sprintf("%s%d", side, b.offset+int32(j))] = n
			}
		}
	}
	want := map[string]uint64{"zero": 0}
	for _, b := range aggregate.Buckets(q, en) {
		i, pos, zero := ExpIndex(b[0], b[1])
		switch {
		case zero:
			want["zero"] += uint64(b[2])
		case pos:
			want[fmt.Sprintf("+%d", i)] += uint64(b[2])
		default:
			want[fmt.Sprintf("-%d", i)] += uint64(b[2])
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || got["zero"] == 0 || len(got) < 10 {
		t.Errorf("buckets %v, want %v", got, want)
	}
}

// TestExplicit: lquantize's buckets become explicit bounds, each the
// largest value of its bucket.
func TestExplicit(t *testing.T) {
	l := aggregate.New(&aggregate.Desc{ID: 0, Name: "@l", Func: program.AggLquantize, Base: 0, Levels: 10, Step: 10})
	slots := make([]int64, l.Desc.NSlots())
	for _, v := range []int64{-5, 0, 9, 10, 15, 99, 100, 500} {
		l.Desc.Update(slots, v, 1)
	}
	l.Add(nil, slots)
	p := explicitHistogram(l, l.Entries()[0])
	if p.count != 8 || len(p.bucketCounts) != len(p.bounds)+1 {
		t.Fatalf("%v", p)
	}
	// (-inf, -1]: -5; (-1, 9]: 0, 9; (9, 19]: 10, 15; ... (89, 99]: 99;
	// (99, inf): 100, 500.
	if p.bounds[0] != -1 || p.bounds[1] != 9 || p.bucketCounts[0] != 1 || p.bucketCounts[1] != 2 ||
		p.bucketCounts[2] != 2 || p.bucketCounts[len(p.bucketCounts)-1] != 2 {
		t.Errorf("bounds %v counts %v", p.bounds, p.bucketCounts)
	}
}

// receiver is an OTLP receiver for the tests: HTTP/protobuf and gRPC
// (HTTP/2 without TLS) on one loopback port.
type receiver struct {
	mu      sync.Mutex
	metrics []*metricspb.ResourceMetrics
	spans   []*tracepb.ResourceSpans
	paths   map[string]int
	block   chan struct{} // when set, requests wait on it
	// reqs are the requests' headers, protocols and TLS client
	// certificates' names.
	reqs []seenRequest
	srv  *http.Server
	addr string
}

func startReceiver(t *testing.T) *receiver { return serveReceiver(t, nil) }

// serveReceiver starts a receiver on a loopback port, over TLS with cfg
// (HTTP/1.1 and HTTP/2 by ALPN) or, without cfg, in clear text (HTTP/1.1
// and HTTP/2 without TLS, as gRPC's h2c).
func serveReceiver(t *testing.T, cfg *tls.Config) *receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{paths: map[string]int{}, addr: ln.Addr().String()}
	var p http.Protocols
	p.SetHTTP1(true)
	r.srv = &http.Server{Handler: r, Protocols: &p, TLSConfig: cfg}
	if cfg == nil {
		p.SetUnencryptedHTTP2(true)
		go r.srv.Serve(ln)
	} else {
		p.SetHTTP2(true)
		r.srv.ErrorLog = log.New(io.Discard, "", 0)
		go r.srv.ServeTLS(ln, "", "")
	}
	t.Cleanup(func() { r.srv.Close() })
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if r.block != nil {
		<-r.block
	}
	body, _ := io.ReadAll(req.Body)
	grpc := req.Header.Get("Content-Type") == "application/grpc"
	if grpc {
		if len(body) < 5 || int(binary.BigEndian.Uint32(body[1:])) != len(body)-5 {
			http.Error(w, "bad frame", 400)
			return
		}
		body = body[5:]
	}
	r.mu.Lock()
	r.paths[req.URL.Path]++
	seen := seenRequest{header: req.Header.Clone(), proto: req.Proto}
	if req.TLS != nil && len(req.TLS.PeerCertificates) > 0 {
		seen.client = req.TLS.PeerCertificates[0].Subject.CommonName
	}
	r.reqs = append(r.reqs, seen)
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		body = body[n:]
		if num != 1 || typ != protowire.BytesType {
			break
		}
		m, n := protowire.ConsumeBytes(body)
		body = body[n:]
		switch req.URL.Path {
		case "/v1/metrics", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export":
			rm := &metricspb.ResourceMetrics{}
			proto.Unmarshal(m, rm)
			r.metrics = append(r.metrics, rm)
		default:
			rs := &tracepb.ResourceSpans{}
			proto.Unmarshal(m, rs)
			r.spans = append(r.spans, rs)
		}
	}
	r.mu.Unlock()
	if grpc {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set("Grpc-Status", "0")
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

func noEnv(string) string { return "" }

// TestProtocols exports aggregations over HTTP/protobuf and gRPC: the
// receiver gets each metric, on the signal's path.
func TestProtocols(t *testing.T) {
	for _, proto := range []string{ProtoHTTP, ProtoGRPC} {
		t.Run(proto, func(t *testing.T) {
			r := startReceiver(t)
			e, err := New(Config{URL: "http://" + r.addr, Protocol: proto, Getenv: noEnv, Version: "test", Kernel: "6.18"})
			if err != nil {
				t.Fatal(err)
			}
			c := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
			c.Add(nil, []int64{5000})
			dropped, sent, lastErr := e.Close([]*aggregate.Agg{c, quantized([]int64{1, 2, 3})}, nil, 10*time.Second)
			if dropped != 0 || sent != 2 {
				t.Fatalf("dropped %d sent %d: %s", dropped, sent, lastErr)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.metrics) != 1 || len(r.metrics[0].ScopeMetrics[0].Metrics) != 2 {
				t.Fatalf("received %v", r.metrics)
			}
			m := r.metrics[0].ScopeMetrics[0].Metrics[0]
			if m.Name != "dtrace.calls" || m.GetSum().GetDataPoints()[0].GetAsInt() != 5000 || !m.GetSum().IsMonotonic {
				t.Errorf("dtrace.calls: %v", m)
			}
			if h := r.metrics[0].ScopeMetrics[0].Metrics[1].GetExponentialHistogram(); h.GetDataPoints()[0].Count != 3 {
				t.Errorf("dtrace.q: %v", h)
			}
			path := "/v1/metrics"
			if proto == ProtoGRPC {
				path = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
			}
			if r.paths[path] != 1 {
				t.Errorf("paths %v", r.paths)
			}
		})
	}
}

// TestEnvironment: the OTEL_EXPORTER_OTLP_ variables, a signal's own
// before the general ones, -x otlp's URL before both.
func TestEnvironment(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":         "https://collector:4318/base",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:9999/m",
		"OTEL_EXPORTER_OTLP_HEADERS":          "api-key=s%20cret, x=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":   "x=2",
		"OTEL_EXPORTER_OTLP_TIMEOUT":          "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION":      "gzip",
	}
	get := func(k string) string { return env[k] }
	tr, err := resolve(traces, "", "", get)
	if err != nil {
		t.Fatal(err)
	}
	if tr.url != "https://collector:4318/base/v1/traces" || tr.headers["x"] != "2" || tr.timeout != 2500*time.Millisecond ||
		!tr.gzip || tr.tls == nil || tr.proto != ProtoHTTP {
		t.Errorf("traces: %+v", tr)
	}
	me, err := resolve(metrics, "", "", get)
	if err != nil {
		t.Fatal(err)
	}
	if me.url != "http://metrics:9999/m" || me.headers["api-key"] != "s cret" || me.headers["x"] != "1" || me.tls != nil {
		t.Errorf("metrics: %+v", me)
	}
	if me, _ := resolve(metrics, "http://x:1", "", get); me.url != "http://x:1/v1/metrics" {
		t.Errorf("-x otlp: %s", me.url)
	}
	env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
	env["OTEL_EXPORTER_OTLP_INSECURE"] = "true"
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "collector:4317"
	if tr, err := resolve(traces, "", "", get); err != nil || tr.url != "http://collector:4317/opentelemetry.proto.collector.trace.v1.TraceService/Export" {
		t.Errorf("grpc: %v %v", tr, err)
	}
	env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json"
	if _, err := resolve(traces, "", "", get); err == nil {
		t.Errorf("http/json accepted")
	}
}

// TestNeverBlocks: with a receiver that does not answer, exporting goes
// on at once; what cannot wait in the queue, and what the receiver never
// took, is counted as dropped. A receiver that is down drops too.
func TestNeverBlocks(t *testing.T) {
	r := startReceiver(t)
	r.block = make(chan struct{})
	defer close(r.block)
	e, err := New(Config{URL: "http://" + r.addr, Getenv: func(k string) string {
		if k == "OTEL_EXPORTER_OTLP_TIMEOUT" {
			return "300"
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
	c.Add(nil, []int64{1})
	const n = 1000
	for i := 0; i < n; i++ {
		e.Metrics([]*aggregate.Agg{c}, nil)
	}
	dropped, sent, _ := e.Close(nil, nil, 100*time.Millisecond)
	if sent != 0 || dropped != n {
		t.Errorf("sent %d, dropped %d, want 0 and %d", sent, dropped, n)
	}

	// Nothing listens.
	addr := r.addr
	r.srv.Close()
	e, err = New(Config{URL: "http://" + addr, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	e.Metrics([]*aggregate.Agg{c}, nil)
	if dropped, _, lastErr := e.Close(nil, nil, 5*time.Second); dropped != 1 || lastErr == "" {
		t.Errorf("receiver down: dropped %d (%s), want 1", dropped, lastErr)
	}
}

// rec renders one record of a probe firing through the span renderer.
func rec(t *testing.T, r output.Renderer, pid int, fn, name string, time, flow uint64, text string) {
	t.Helper()
	id := map[string]uint32{"write:entry": 1, "write:return": 2, "read:entry": 3, "read:return": 4}[fn+":"+name]
	o := &output.Record{Known: true, Probe: output.Probe{ID: id, Provider: "syscall", Function: fn, Name: name},
		Time: time, PID: pid, TID: pid, Flow: flow, Data: true}
	if err := r.Begin(o); err != nil {
		t.Fatal(err)
	}
	if err := r.End(o); err != nil {
		t.Fatal(err)
	}
}

// TestFlowTrace: producer | filter | consumer, one request (flow 7): the
// producer's write is the root; the filter's read, which takes flow 7 at
// its return (its entry still had the previous request's flow 6), and its
// write descend from it; the consumer's read and write from the
// filter's write. The filter's next read, entered with flow 7, returns
// with flow 8 and is no parent in trace 7.
func TestFlowTrace(t *testing.T) {
	r := startReceiver(t)
	e, err := New(Config{URL: "http://" + r.addr, Getenv: noEnv, Spans: func(output.Probe) bool { return true },
		Names: func(pid, _ int) (string, string) {
			return map[int]string{1: "producer", 2: "filter", 3: "consumer"}[pid], ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	sr := e.Renderer()
	const P, F, C = 1, 2, 3
	rec(t, sr, F, "read", "entry", 10, 6, "")
	rec(t, sr, P, "write", "entry", 20, 7, "")
	rec(t, sr, F, "read", "return", 30, 7, "")
	rec(t, sr, P, "write", "return", 40, 7, "")
	rec(t, sr, C, "read", "entry", 45, 6, "")
	rec(t, sr, F, "write", "entry", 50, 7, "")
	rec(t, sr, F, "write", "return", 60, 7, "")
	rec(t, sr, F, "read", "entry", 65, 7, "")
	rec(t, sr, C, "read", "return", 70, 7, "")
	rec(t, sr, C, "write", "entry", 80, 7, "")
	rec(t, sr, C, "write", "return", 90, 7, "")
	rec(t, sr, F, "read", "return", 95, 8, "")
	if _, _, msg := e.Close(nil, nil, 5*time.Second); msg != "" {
		t.Fatal(msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	type key struct {
		svc, name string
		start     uint64
	}
	byID := map[string]key{}
	parent := map[key]string{}
	trace := map[key]string{}
	for _, rs := range r.spans {
		svc := ""
		for _, a := range rs.Resource.Attributes {
			if a.Key == "service.name" {
				svc = a.Value.GetStringValue()
			}
		}
		for _, s := range rs.ScopeSpans[0].Spans {
			k := key{svc, s.Name, s.StartTimeUnixNano - e.unix(0)}
			byID[string(s.SpanId)] = k
			parent[k] = string(s.ParentSpanId)
			trace[k] = fmt.Sprintf("%x", s.TraceId)
		}
	}
	want := map[key]key{
		{"producer", "write", 20}: {},
		{"filter", "read", 10}:    {"producer", "write", 20},
		{"filter", "write", 50}:   {"producer", "write", 20},
		{"consumer", "read", 45}:  {"filter", "write", 50},
		{"consumer", "write", 80}: {"filter", "write", 50},
	}
	t7 := trace[key{"producer", "write", 20}]
	for k, p := range want {
		if got := byID[parent[k]]; got != p {
			t.Errorf("%v: parent %v, want %v", k, got, p)
		}
		if trace[k] != t7 {
			t.Errorf("%v: trace %s, want %s", k, trace[k], t7)
		}
	}
	if next := (key{"filter", "read", 65}); trace[next] == t7 || parent[next] != "" {
		t.Errorf("the next request's read: trace %s parent %q", trace[next], parent[next])
	}
}

// TestMachines: an aggregation keyed first by machine (a host's merged
// with its guests') is a resource per machine, the key dropped.
func TestMachines(t *testing.T) {
	r := startReceiver(t)
	e, err := New(Config{URL: "http://" + r.addr, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	c := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
	c.Add([]program.Value{program.String("host"), program.String("read")}, []int64{3})
	c.Add([]program.Value{program.String("vm1"), program.String("read")}, []int64{5})
	if dropped, _, msg := e.Close([]*aggregate.Agg{c}, []string{"host", "vm1"}, 5*time.Second); dropped != 0 {
		t.Fatal(msg)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	got := map[string]int64{}
	for _, rm := range r.metrics {
		machine := ""
		for _, a := range rm.Resource.Attributes {
			if a.Key == "dtrace.machine" {
				machine = a.Value.GetStringValue()
			}
		}
		p := rm.ScopeMetrics[0].Metrics[0].GetSum().DataPoints[0]
		if len(p.Attributes) != 1 || p.Attributes[0].Value.GetStringValue() != "read" {
			t.Errorf("%s: attributes %v", machine, p.Attributes)
		}
		got[machine] = p.GetAsInt()
	}
	if fmt.Sprint(got) != "map[host:3 vm1:5]" {
		t.Errorf("resources %v", got)
	}
}
