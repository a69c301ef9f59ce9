// Package prom serves a program's aggregations as Prometheus metrics on
// /metrics while dtrace runs. Each aggregation @NAME is the metric family
// dtrace_NAME (dtrace_agg for @); its keys are labels key0, key1, ... or
// the names given; count, sum, min, max, avg and stddev are gauges (clear()
// and trunc() can lower them, which a counter may not do); quantize,
// lquantize and llquantize are histograms with a bucket per non-empty
// bucket of the aggregation (upper bounds inclusive, as "le" is), their
// sum estimated from the buckets' lower bounds since the kernel keeps
// only counts; quantize is a native histogram too (withNative).
//
// Values are read from the kernel at scrape time, by the goroutine that
// consumes the buffers: a scrape asks (Server.Serve answers between
// passes over the buffers), so that reading never races the consumer.
//
// Without a web configuration file only loopback addresses are served,
// in plain HTTP. With one (-x promwebconfig=FILE, the file every
// Prometheus exporter takes: prometheus/exporter-toolkit's TLS server
// settings, client CA, basic-auth users with bcrypt hashes) any address
// is, with what the file configures; it must configure TLS or basic
// authentication, so that a fleet's scrape target is never open by
// mistake. The file is read again for every connection, as the toolkit
// does, so renewed certificates and changed users apply without a
// restart.
package prom

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// CheckAddr checks that addr is host:port and that it can be listened
// on now. Whether it may be served is Exposure's question.
func CheckAddr(addr string) error {
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	return ln.Close()
}

// Loopback reports whether addr's host is a loopback address or
// localhost.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Exposure checks that addr may be served with the web configuration
// file webConfig ("" for none): a loopback address always, any other
// only with a file.
func Exposure(addr, webConfig string) error {
	if webConfig == "" && !Loopback(addr) {
		host, _, _ := net.SplitHostPort(addr)
		if host == "" {
			host = "every address"
		}
		return fmt.Errorf("%s is not a loopback address: serving it needs -x promwebconfig=FILE (TLS or basic authentication)", host)
	}
	return nil
}

// CheckWebConfig checks a web configuration file (its YAML, certificate,
// key, client CA, bcrypt hashes) and that it configures TLS or basic
// authentication.
func CheckWebConfig(file string) error {
	if file == "" {
		return errors.New("no file named")
	}
	c, err := readWebConfig(file)
	if err != nil {
		return err
	}
	if !c.tlsOn() && len(c.Users) == 0 {
		return fmt.Errorf("%s configures neither tls_server_config nor basic_auth_users", file)
	}
	return nil
}

// Listen listens on addr, a loopback host:port.
func Listen(addr string) (net.Listener, error) {
	if err := Exposure(addr, ""); err != nil {
		return nil, err
	}
	return listen(addr)
}

// listen listens on addr, a host:port.
func listen(addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// CheckLabels checks names given for the keys' labels.
func CheckLabels(s string) error {
	for _, n := range strings.Split(s, ",") {
		if !validName(n) || strings.HasPrefix(n, "__") {
			return fmt.Errorf("bad label name %q", n)
		}
	}
	return nil
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Reader reads every aggregation from the kernel.
type Reader func() ([]*aggregate.Agg, error)

// Server serves /metrics.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	labels []string
	sym    format.Symbolizer
	reqs   chan chan []prometheus.Metric
	done   chan struct{}
}

// Config says where and how a Server serves.
type Config struct {
	// Addr is the host:port listened on.
	Addr string
	// WebConfig is the web configuration file (TLS, basic auth), ""
	// for none: then Addr must be a loopback address.
	WebConfig string
	// Labels name the keys' labels (empty: key0, key1, ...).
	Labels []string
	// Sym resolves stack keys.
	Sym format.Symbolizer
}

// Start listens on addr, a loopback address, and serves /metrics in
// plain HTTP; labels name the keys' labels (empty: key0, key1, ...), sym
// resolves stack keys.
func Start(addr string, labels []string, sym format.Symbolizer) (*Server, error) {
	return StartConfig(Config{Addr: addr, Labels: labels, Sym: sym})
}

// StartConfig listens and serves /metrics as c says.
func StartConfig(c Config) (*Server, error) {
	if err := Exposure(c.Addr, c.WebConfig); err != nil {
		return nil, err
	}
	if c.WebConfig != "" {
		if err := CheckWebConfig(c.WebConfig); err != nil {
			return nil, err
		}
	}
	ln, err := listen(c.Addr)
	if err != nil {
		return nil, err
	}
	labels, sym := c.Labels, c.Sym
	s := &Server{ln: ln, labels: labels, sym: sym, reqs: make(chan chan []prometheus.Metric), done: make(chan struct{})}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{s})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if c.WebConfig == "" {
		go s.srv.Serve(ln)
		return s, nil
	}
	auth := &authHandler{file: c.WebConfig, h: mux}
	wc := auth.config()
	if wc == nil {
		ln.Close()
		return nil, fmt.Errorf("%s: cannot be read", c.WebConfig)
	}
	s.srv.Handler = auth
	if !wc.tlsOn() {
		go s.srv.Serve(ln)
		return s, nil
	}
	tc, err := wc.tlsConfig()
	if err != nil {
		ln.Close()
		return nil, err
	}
	if wc.HTTP.HTTP2 != nil && !*wc.HTTP.HTTP2 {
		s.srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	s.srv.TLSConfig = tc
	go s.srv.ServeTLS(ln, "", "")
	return s, nil
}

// Addr is the address served.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers the scrapes waiting, reading the aggregations with read.
// The consumer's goroutine calls it between passes over the buffers.
func (s *Server) Serve(read Reader) error {
	for {
		select {
		case reply := <-s.reqs:
			aggs, err := read()
			if err != nil {
				close(reply)
				return err
			}
			reply <- s.Metrics(aggs)
		default:
			return nil
		}
	}
}

// Close stops serving; scrapes then find no aggregations.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	return s.srv.Close()
}

// scrapeWait bounds how long a scrape waits for the consumer.
const scrapeWait = 5 * time.Second

// collector asks the consumer for the metrics at scrape time.
type collector struct{ s *Server }

// Describe describes nothing: the families follow the program's
// aggregations, which the registry then does not check in advance.
func (collector) Describe(chan<- *prometheus.Desc) {}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	reply := make(chan []prometheus.Metric, 1)
	select {
	case c.s.reqs <- reply:
	case <-c.s.done:
		return
	case <-time.After(scrapeWait):
		return
	}
	select {
	case ms := <-reply:
		for _, m := range ms {
			ch <- m
		}
	case <-time.After(scrapeWait):
	}
}

// Name is the metric family of an aggregation: dtrace_NAME, characters
// Prometheus does not take as '_'.
func Name(a *aggregate.Agg) string {
	n := strings.TrimPrefix(a.Desc.Name, "@")
	if n == "" {
		n = "agg"
	}
	b := []byte(n)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return "dtrace_" + string(b)
}

// Metrics turns aggregations into metrics.
func (s *Server) Metrics(aggs []*aggregate.Agg) []prometheus.Metric {
	var out []prometheus.Metric
	for _, a := range aggs {
		if a == nil {
			continue
		}
		var desc *prometheus.Desc
		for _, e := range a.Entries() {
			if desc == nil {
				desc = prometheus.NewDesc(Name(a), fmt.Sprintf("dtrace aggregation %s = %s()", aggLabel(a), a.Desc.Func),
					s.labelNames(len(e.Key)), nil)
			}
			vals := s.labelValues(e.Key)
			var m prometheus.Metric
			var err error
			switch a.Desc.Func {
			case program.AggQuantize, program.AggLquantize, program.AggLlquantize:
				count, sum, buckets := histogram(a, e)
				m, err = prometheus.NewConstHistogram(desc, count, sum, buckets, vals...)
				if err == nil && a.Desc.Func == program.AggQuantize {
					m, err = withNative(m, a, e)
				}
			default:
				m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, float64(output.Value(a, e)), vals...)
			}
			if err == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

func aggLabel(a *aggregate.Agg) string {
	if a.Desc.Name == "" {
		return "@"
	}
	return a.Desc.Name
}

func (s *Server) labelNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		if i < len(s.labels) && s.labels[i] != "" {
			names[i] = s.labels[i]
		} else {
			names[i] = fmt.Sprintf("key%d", i)
		}
	}
	return names
}

func (s *Server) labelValues(key []program.Value) []string {
	vals := make([]string, len(key))
	for i, k := range key {
		switch x := k.(type) {
		case program.String:
			vals[i] = string(x)
		case program.Int:
			if x.Signed {
				vals[i] = fmt.Sprint(x.Int64())
			} else {
				vals[i] = fmt.Sprint(x.Uint64())
			}
		case program.Stack:
			a := aggregate.New(&aggregate.Desc{Func: program.AggCount})
			a.Add([]program.Value{x}, []int64{0})
			if f := output.Fold(a, s.sym, aggregate.SortOptions{}); len(f) == 1 {
				vals[i] = strings.Join(f[0].Frames, ";")
			}
		case program.Sym:
			vals[i] = output.FrameName(s.sym, x.Kind >= program.UserSym, x.PID, x.Addr)
		default:
			vals[i] = fmt.Sprint(k)
		}
	}
	return vals
}

// histogram gives a quantization's count, estimated sum and cumulative
// buckets by upper bound.
func histogram(a *aggregate.Agg, e *aggregate.Entry) (uint64, float64, map[float64]uint64) {
	buckets := map[float64]uint64{}
	var count uint64
	var sum float64
	for _, b := range aggregate.Buckets(a, e) {
		lo, hi, n := b[0], b[1], b[2]
		if n <= 0 {
			continue
		}
		count += uint64(n)
		sum += float64(lo) * float64(n)
		if hi != math.MaxInt64 {
			buckets[float64(hi)] = count
		}
	}
	return count, sum, buckets
}

// withNative adds to the classic histogram m of quantize() entry e the
// same counts as a native histogram of schema 0 (buckets at the powers
// of two, which quantize's are too). A quantize bucket [2^k, 2^(k+1)-1]
// goes to the native bucket that holds its upper bound, (2^k, 2^(k+1)]:
// only a value that is itself a power of two sits one native bucket
// higher than an observed native histogram would put it. lquantize and
// llquantize buckets are linear within a power of ten, which no native
// schema draws: they stay classic only.
func withNative(m prometheus.Metric, a *aggregate.Agg, e *aggregate.Entry) (prometheus.Metric, error) {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		return nil, err
	}
	h := out.Histogram
	pos, neg := map[int]int64{}, map[int]int64{}
	var zero uint64
	for _, b := range aggregate.Buckets(a, e) {
		lo, hi, n := b[0], b[1], b[2]
		switch {
		case n <= 0:
		case lo == 0 && hi == 0:
			zero += uint64(n)
		case lo > 0:
			pos[bits.Len64(uint64(hi-1))] += n
		default:
			neg[bits.Len64(uint64(-lo)-1)] += n
		}
	}
	h.Schema, h.ZeroThreshold, h.ZeroCount = proto.Int32(0), proto.Float64(0), proto.Uint64(zero)
	h.PositiveSpan, h.PositiveDelta = nativeSpans(pos)
	h.NegativeSpan, h.NegativeDelta = nativeSpans(neg)
	return nativeMetric{m.Desc(), &out}, nil
}

// nativeSpans encodes counts by bucket index as a native histogram does:
// spans of consecutive indices (the first at its index, the others after
// a gap) and each count as the difference from the one before.
func nativeSpans(counts map[int]int64) ([]*dto.BucketSpan, []int64) {
	idx := make([]int, 0, len(counts))
	for i := range counts {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var spans []*dto.BucketSpan
	var deltas []int64
	prevIdx, prev := 0, int64(0)
	for k, i := range idx {
		switch {
		case k == 0:
			spans = append(spans, &dto.BucketSpan{Offset: proto.Int32(int32(i)), Length: proto.Uint32(1)})
		case i == prevIdx+1:
			*spans[len(spans)-1].Length++
		default:
			spans = append(spans, &dto.BucketSpan{Offset: proto.Int32(int32(i - prevIdx - 1)), Length: proto.Uint32(1)})
		}
		deltas = append(deltas, counts[i]-prev)
		prevIdx, prev = i, counts[i]
	}
	return spans, deltas
}

// nativeMetric is a metric already written out.
type nativeMetric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (n nativeMetric) Desc() *prometheus.Desc { return n.desc }

func (n nativeMetric) Write(out *dto.Metric) error {
	out.Label, out.Histogram = n.m.Label, n.m.Histogram
	return nil
}

// ErrClosed is returned by Serve's reader once tracing is over.
var ErrClosed = errors.New("prometheus endpoint closed")
