// Package otlp exports what dtrace sees to OpenTelemetry (-x otlp=URL):
// the records of the probes that -x otlpspans names as spans, the
// aggregations as metrics, over OTLP (HTTP/protobuf or gRPC) to a
// Collector or any OTLP receiver (Jaeger, Grafana's, a vendor's).
//
// Spans. Each entry/return pair of a named probe on one thread is a
// span, nested as the pairs nest; a firing that is no pair is an event
// of the span open on its thread (a span of no duration of its own when
// none is). A program's flow variables (flow->, flowid) make the trace:
// a flow is one trace (its id is a prefix of the run and the flowid),
// and a span that joins a flow with no parent on its thread descends from
// the span of another process that joined the flow last before it, the
// one that handed the work over (a write whose bytes a read took; a read
// joins the flow it returns with). printf() text and trace()d values are
// the span's attributes. Each process is a resource: its name as
// service.name, its pid, its container.
//
// Metrics. Every aggregation is a metric of cumulative data points, one
// per key, keys as attributes key0, key1, ... (or -x promlabels'
// names): count() a monotonic sum, sum() a sum, min, max, avg and stddev
// gauges, quantize() an exponential histogram of scale 0 (ExpIndex says
// where each bucket goes), lquantize() and llquantize() histograms with
// explicit bounds. They are exported every aggrate (when set; else every
// OTEL_METRIC_EXPORT_INTERVAL, 60 s by default) and at exit.
//
// Resources say the host (host.name, os.type, os.version: the kernel),
// dtrace's version, and the machine (dtrace.machine: "host", or the
// guest's name for aggregations of -x guest= machines).
//
// The consumer never waits for the receiver: requests go into a queue
// that a goroutine of its own sends from; a request that finds it full,
// or that the receiver refuses or does not answer in time, is dropped,
// and what it held is counted and reported at exit ("N OTLP records
// dropped").
package otlp

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Config sets up an Exporter.
type Config struct {
	// URL is -x otlp=: the receiver's base URL (the signals' paths
	// are added for HTTP); "" takes OTEL_EXPORTER_OTLP_ENDPOINT and
	// friends. Protocol is ProtoHTTP or ProtoGRPC ("": the
	// environment's, else HTTP).
	URL, Protocol string
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Spans reports whether a probe's records are exported as spans
	// (nil: none are).
	Spans func(output.Probe) bool
	// Labels name the keys' attributes (empty: key0, key1, ...).
	Labels []string
	// Settings, Sym and Target format printf() text and values.
	Settings output.Settings
	Sym      format.Symbolizer
	Target   int
	// Names gives a process's and thread's names.
	Names func(pid, tid int) (string, string)
	// Version is dtrace's version; Kernel the kernel's release.
	Version, Kernel string
	// Interval is how often metrics are exported (0: the
	// environment's OTEL_METRIC_EXPORT_INTERVAL, else 60 s).
	Interval time.Duration
	// Now gives the wall clock (time.Now when nil); Clock the
	// CLOCK_MONOTONIC nanoseconds records are stamped with.
	Now   func() time.Time
	Clock func() uint64
}

// Exporter exports spans and metrics.
type Exporter struct {
	c          Config
	traces     *endpoint
	metrics    *endpoint
	s          *sender
	spans      *spanRenderer
	containers *output.Containers
	labels     []string
	sym        format.Symbolizer
	host       string
	epoch      int64  // Unix ns of CLOCK_MONOTONIC's zero
	start      uint64 // Unix ns when tracing started
	last       time.Time
	procs      map[int][]keyValue
	mu         sync.Mutex
	closed     bool
}

// New checks the configuration and starts the sender. Nothing is sent
// until there is something to send.
func New(c Config) (*Exporter, error) {
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Clock == nil {
		c.Clock = output.Monotonic
	}
	if c.Names == nil {
		c.Names = func(int, int) (string, string) { return "", "" }
	}
	if c.Interval <= 0 {
		c.Interval = 60 * time.Second
		if ms, err := strconv.Atoi(c.Getenv("OTEL_METRIC_EXPORT_INTERVAL")); err == nil && ms > 0 {
			c.Interval = time.Duration(ms) * time.Millisecond
		}
	}
	e := &Exporter{c: c, labels: c.Labels, sym: c.Sym, procs: map[int][]keyValue{}, containers: output.NewContainers()}
	var err error
	if e.traces, err = resolve(traces, c.URL, c.Protocol, c.Getenv); err != nil {
		return nil, err
	}
	if e.metrics, err = resolve(metrics, c.URL, c.Protocol, c.Getenv); err != nil {
		return nil, err
	}
	e.host, _ = os.Hostname()
	now := c.Now()
	e.epoch = now.UnixNano() - int64(c.Clock())
	e.start = uint64(now.UnixNano())
	e.last = now
	e.spans = newSpanRenderer(e)
	e.s = newSender()
	return e, nil
}

// Renderer is the renderer that makes spans of the records it sees; the
// consumer's records go to it beside the output's renderer.
func (e *Exporter) Renderer() output.Renderer { return e.spans }

// unix converts a CLOCK_MONOTONIC time to Unix nanoseconds.
func (e *Exporter) unix(mono uint64) uint64 { return uint64(e.epoch + int64(mono)) }

// hostAttrs are the attributes of the machine dtrace runs on.
func (e *Exporter) hostAttrs() []keyValue {
	return []keyValue{kv("host.name", strValue(e.host)), kv("os.type", strValue("linux")),
		kv("os.version", strValue(e.c.Kernel)), kv("dtrace.version", strValue(e.c.Version)),
		kv("dtrace.machine", strValue("host"))}
}

// Due reports whether metrics are due for export: an interval has
// passed since the last export.
func (e *Exporter) Due() bool { return e.c.Now().Sub(e.last) >= e.c.Interval }

// Metrics exports the aggregations now. An aggregation keyed first by
// the machine (the host's merged with its guests', -x guest=) is split
// into a resource per machine, so that a Collector tells host and guests
// apart; machines names those machines (nil: none).
func (e *Exporter) Metrics(aggs []*aggregate.Agg, machines []string) {
	now := e.c.Now()
	e.last = now
	if body, n := e.metricsRequest(aggs, machines, uint64(now.UnixNano())); n > 0 {
		e.send(e.metrics, body, n)
	}
}

// metricsRequest is the ExportMetricsServiceRequest of the aggregations
// read at now (Unix ns), and how many data points it holds.
func (e *Exporter) metricsRequest(aggs []*aggregate.Agg, machines []string, now uint64) ([]byte, int) {
	res := map[string][]*metric{}
	var order []string
	n := 0
	for _, a := range aggs {
		if a == nil {
			continue
		}
		for machine, part := range splitByMachine(a, machines) {
			m, points := e.metric(part, e.start, now)
			if m == nil {
				continue
			}
			if res[machine] == nil {
				order = append(order, machine)
			}
			res[machine] = append(res[machine], m)
			n += points
		}
	}
	if n == 0 {
		return nil, 0
	}
	// A ResourceMetrics per machine.
	var b []byte
	var at, sm int
	for _, machine := range order {
		attrs := append([]keyValue{kv("service.name", strValue("dtrace"))}, e.hostAttrs()...)
		if machine != "host" {
			for i, a := range attrs {
				if a.key == "host.name" || a.key == "dtrace.machine" {
					attrs[i].value = strValue(machine)
				}
			}
		}
		b, at = begin(b, 1)
		b, sm = appendResource(b, attrs, e.c.Version)
		for _, m := range res[machine] {
			b = m.appendTo(b, 2)
		}
		b = end(end(b, sm), at)
	}
	return b, n
}

// splitByMachine parts an aggregation by its first key when that names
// one of machines (as aggregations merged across guests are keyed);
// otherwise the whole is the host's.
func splitByMachine(a *aggregate.Agg, machines []string) map[string]*aggregate.Agg {
	if len(machines) == 0 {
		return map[string]*aggregate.Agg{"host": a}
	}
	parts := map[string]*aggregate.Agg{}
	for _, en := range a.Entries() {
		m, ok := "host", false
		if len(en.Key) > 0 {
			if s, isStr := en.Key[0].(program.String); isStr {
				for _, name := range machines {
					if strings.TrimSpace(string(s)) == name {
						m, ok = name, true
					}
				}
			}
		}
		key := en.Key
		if ok {
			key = key[1:]
		}
		p := parts[m]
		if p == nil {
			p = aggregate.New(a.Desc)
			p.Normal = a.Normal
			parts[m] = p
		}
		p.Add(key, en.Data)
	}
	return parts
}

// send queues a request, body, holding n records.
func (e *Exporter) send(ep *endpoint, body []byte, n int) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		e.s.dropped.Add(int64(n))
		return
	}
	e.s.send(batch{ep: ep, body: body, records: n})
}

// Close exports the spans left and the final aggregations (aggs, when
// not nil), waits up to wait for the queue to be sent, and returns how
// many records were dropped in the run and the last error the receiver
// gave ("" for none).
func (e *Exporter) Close(aggs []*aggregate.Agg, machines []string, wait time.Duration) (dropped, sent int64, lastErr string) {
	e.spans.flush(true)
	if aggs != nil {
		e.Metrics(aggs, machines)
	}
	e.mu.Lock()
	already := e.closed
	e.closed = true
	e.mu.Unlock()
	if !already {
		e.s.close(wait)
	}
	if s, ok := e.s.lastErr.Load().(string); ok {
		lastErr = s
	}
	return e.s.dropped.Load(), e.s.sent.Load(), lastErr
}
