package prom

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

// quantized is a quantize() aggregation of values under key.
func quantized(name string, key program.Value, values ...int64) *aggregate.Agg {
	q := aggregate.New(&aggregate.Desc{Name: name, Func: program.AggQuantize})
	add(q, key, values...)
	return q
}

// add adds an entry of values under key to the quantization q.
func add(q *aggregate.Agg, key program.Value, values ...int64) {
	slots := make([]int64, q.Desc.NSlots())
	for _, v := range values {
		q.Desc.Update(slots, v, 1)
	}
	var k []program.Value
	if key != nil {
		k = []program.Value{key}
	}
	q.Add(k, slots)
}

// mixed is a page of every kind: gauges with and without keys, label
// values to escape, quantize() (native) and lquantize() (classic only)
// histograms, an entry whose key is not UTF-8 (left out) and an empty
// aggregation.
func mixed() []*aggregate.Agg {
	calls := aggregate.New(&aggregate.Desc{Name: "@calls", Func: program.AggCount})
	calls.Add(nil, []int64{5000})
	byFunc := aggregate.New(&aggregate.Desc{Name: "@", Func: program.AggSum})
	byFunc.Add([]program.Value{program.String("read"), program.I32(-1)}, []int64{7})
	byFunc.Add([]program.Value{program.String("a\"b\\c\nd"), program.I32(3)}, []int64{-2})
	byFunc.Add([]program.Value{program.String("bad\xff"), program.I32(3)}, []int64{-2})
	byFunc.Add([]program.Value{program.String("aaa"), program.I32(3)}, []int64{0})
	q := quantized("@lat-ns", program.String("x"), 1, 5, 6, 100, 0, -3, -3, -1000, 1<<40)
	add(q, program.String("a"), 1)
	l := aggregate.New(&aggregate.Desc{Name: "@l", Func: program.AggLquantize, Base: 0, Levels: 10, Step: 10})
	lslots := make([]int64, l.Desc.NSlots())
	l.Desc.Update(lslots, 15, 1)
	l.Desc.Update(lslots, -15, 2)
	l.Desc.Update(lslots, 1500, 2)
	l.Add(nil, lslots)
	avg := aggregate.New(&aggregate.Desc{Name: "@avg", Func: program.AggAvg})
	avg.Add(nil, []int64{3, 10})
	empty := aggregate.New(&aggregate.Desc{Name: "@empty", Func: program.AggCount})
	return []*aggregate.Agg{q, calls, byFunc, l, avg, empty}
}

// page gathers aggs as a scrape does, labels naming the keys.
func page(t *testing.T, labels []string, aggs ...*aggregate.Agg) []family {
	t.Helper()
	fams, err := gather((&Server{labels: labels}).families(aggs))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// decode reads delimited MetricFamily messages with protobuf's own
// decoder.
func decode(t *testing.T, b []byte) []*dto.MetricFamily {
	t.Helper()
	var out []*dto.MetricFamily
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		mf := &dto.MetricFamily{}
		if err := protodelim.UnmarshalFrom(r, mf); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, mf)
	}
	return out
}

// TestNative decodes the protobuf page of a gauge and a quantize()
// entry with protobuf's decoder and the Prometheus data model's types,
// and checks every field: the quantization is a classic histogram and,
// with the same counts, a native one of schema 0, each bucket at the
// power of two that bounds it; lquantize() stays classic.
func TestNative(t *testing.T) {
	calls := aggregate.New(&aggregate.Desc{Name: "@calls", Func: program.AggCount})
	calls.Add([]program.Value{program.String("read")}, []int64{5000})
	q := quantized("@q", program.String("x"), 1, 5, 6, 100, 0, -3)
	l := aggregate.New(&aggregate.Desc{Name: "@l", Func: program.AggLquantize, Base: 0, Levels: 10, Step: 10})
	lslots := make([]int64, l.Desc.NSlots())
	l.Desc.Update(lslots, 15, 1)
	l.Add(nil, lslots)
	mfs := decode(t, writeProto(nil, page(t, []string{"func"}, q, calls, l)))
	if len(mfs) != 3 {
		t.Fatalf("%d families, want 3", len(mfs))
	}
	label := func(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }
	want := &dto.MetricFamily{
		Name: proto.String("dtrace_calls"), Help: proto.String("dtrace aggregation @calls = count()"),
		Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{
			Label: []*dto.LabelPair{label("func", "read")},
			Gauge: &dto.Gauge{Value: proto.Float64(5000)},
		}},
	}
	if !proto.Equal(mfs[0], want) {
		t.Errorf("gauge:\n%v\nwant\n%v", mfs[0], want)
	}
	// 1 in (1/2, 1]: index 0; 5 and 6 in (4, 8]: 3; 100 in (64, 128]: 7;
	// -3 in [-4, -2): negative index 2; 0 in the zero bucket. Classic
	// buckets by inclusive upper bound: -3 in [-3, -2], 1 in [1, 1], 5
	// and 6 in [4, 7], 100 in [64, 127]; the sum is of lower bounds:
	// -3 + 0 + 1 + 2*4 + 64.
	bucket := func(le float64, n uint64) *dto.Bucket {
		return &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(n)}
	}
	spanOf := func(off int32, n uint32) *dto.BucketSpan {
		return &dto.BucketSpan{Offset: proto.Int32(off), Length: proto.Uint32(n)}
	}
	want = &dto.MetricFamily{
		Name: proto.String("dtrace_q"), Help: proto.String("dtrace aggregation @q = quantize()"),
		Type: dto.MetricType_HISTOGRAM.Enum(),
		Metric: []*dto.Metric{{
			Label: []*dto.LabelPair{label("func", "x")},
			Histogram: &dto.Histogram{
				SampleCount: proto.Uint64(6), SampleSum: proto.Float64(70),
				Bucket:        []*dto.Bucket{bucket(-2, 1), bucket(0, 2), bucket(1, 3), bucket(7, 5), bucket(127, 6)},
				Schema:        proto.Int32(0),
				ZeroThreshold: proto.Float64(0), ZeroCount: proto.Uint64(1),
				NegativeSpan: []*dto.BucketSpan{spanOf(2, 1)}, NegativeDelta: []int64{1},
				PositiveSpan: []*dto.BucketSpan{spanOf(0, 1), spanOf(2, 1), spanOf(3, 1)}, PositiveDelta: []int64{1, 1, -1},
			},
		}},
	}
	if !proto.Equal(mfs[2], want) {
		t.Errorf("quantize:\n%v\nwant\n%v", mfs[2], want)
	}
	want = &dto.MetricFamily{
		Name: proto.String("dtrace_l"), Help: proto.String("dtrace aggregation @l = lquantize()"),
		Type: dto.MetricType_HISTOGRAM.Enum(),
		Metric: []*dto.Metric{{
			Histogram: &dto.Histogram{SampleCount: proto.Uint64(1), SampleSum: proto.Float64(10), Bucket: []*dto.Bucket{bucket(19, 1)}},
		}},
	}
	if !proto.Equal(mfs[1], want) {
		t.Errorf("lquantize:\n%v\nwant\n%v", mfs[1], want)
	}
}

// bytesAppender is an io.Writer appending to a slice.
type bytesAppender struct{ b *[]byte }

func (a bytesAppender) Write(p []byte) (int, error) {
	*a.b = append(*a.b, p...)
	return len(p), nil
}

// TestFormats: the protobuf page, decoded by protobuf and re-encoded by
// protobuf, is byte for byte ours; written in the text format by
// Prometheus's own encoder (expfmt), it is byte for byte our text page;
// and Prometheus's text parser reads our text page back as the same
// samples.
func TestFormats(t *testing.T) {
	fams := page(t, []string{"func"}, mixed()...)
	pbuf := writeProto(nil, fams)
	mfs := decode(t, pbuf)
	var again []byte
	for _, mf := range mfs {
		if _, err := protodelim.MarshalTo(bytesAppender{&again}, mf); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(again, pbuf) {
		t.Errorf("protobuf encodes the decoded page differently:\n%x\nours:\n%x", again, pbuf)
	}
	var theirs bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&theirs, mf); err != nil {
			t.Fatal(err)
		}
	}
	var ours strings.Builder
	writeText(&ours, fams)
	if ours.String() != theirs.String() {
		t.Errorf("text page:\n%s\nexpfmt writes:\n%s", ours.String(), theirs.String())
	}
	for _, want := range []string{`dtrace_agg{func="a\"b\\c\nd",key1="3"} -2` + "\n", "\ndtrace_calls 5000\n",
		`dtrace_lat_ns_bucket{func="x",le="2.199023255551e+12"} 9` + "\n", `dtrace_lat_ns_bucket{func="x",le="+Inf"} 9` + "\n"} {
		if !strings.Contains(ours.String(), want) {
			t.Errorf("text page lacks %q", want)
		}
	}
	if strings.Contains(ours.String(), "bad") || strings.Contains(ours.String(), "empty") {
		t.Errorf("text page has the entry that is not UTF-8 or the empty aggregation:\n%s", ours.String())
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := parser.TextToMetricFamilies(strings.NewReader(ours.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed) != len(mfs) {
		t.Fatalf("%d families parsed, want %d", len(parsed), len(mfs))
	}
	for _, mf := range mfs {
		p := parsed[mf.GetName()]
		if p == nil || len(p.Metric) != len(mf.Metric) || p.GetType() != mf.GetType() || p.GetHelp() != mf.GetHelp() {
			t.Errorf("%s parsed as %v", mf.GetName(), p)
			continue
		}
		for i, m := range mf.Metric {
			if h := m.GetHistogram(); h != nil {
				ph := p.Metric[i].GetHistogram()
				if ph.GetSampleCount() != h.GetSampleCount() || ph.GetSampleSum() != h.GetSampleSum() ||
					len(ph.Bucket) != len(h.Bucket)+1 || !math.IsInf(ph.Bucket[len(h.Bucket)].GetUpperBound(), 1) {
					t.Errorf("%s: parsed %v, served %v", mf.GetName(), ph, h)
				}
			} else if p.Metric[i].GetGauge().GetValue() != m.GetGauge().GetValue() {
				t.Errorf("%s: parsed %v, served %v", mf.GetName(), p.Metric[i], m)
			}
		}
	}
}

// TestNegotiate: the delimited protobuf format when a clause asks for it
// before text/plain (as Prometheus does with native histograms on), the
// text format otherwise; the escaping parameter echoed; gzip when
// Accept-Encoding prefers it. The expectations are what Prometheus's
// client library (promhttp) answered.
func TestNegotiate(t *testing.T) {
	const pbuf = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
	for _, c := range []struct {
		accept string
		proto  bool
		esc    string
	}{
		{"", false, "underscores"},
		{"text/plain", false, "underscores"},
		{"*/*", false, "underscores"},
		{"application/json", false, "underscores"},
		{"application/openmetrics-text; version=1.0.0", false, "underscores"},
		{pbuf, true, "underscores"},
		{pbuf + ";escaping=allow-utf-8", true, "allow-utf-8"},
		{pbuf + ";escaping=bogus", true, "underscores"},
		{pbuf + ";q=0.8,application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.1", true, "underscores"},
		{"text/plain;version=0.0.4;q=0.9," + pbuf + ";q=0.5", false, "underscores"},
		{"text/plain;version=0.0.4;q=0.4," + pbuf + ";q=0.5", true, "underscores"},
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily", false, "underscores"},
	} {
		proto, ctype := negotiate(c.accept)
		want := textType
		if c.proto {
			want = protoType
		}
		if want += "; escaping=" + c.esc; proto != c.proto || ctype != want {
			t.Errorf("Accept %q: %v %q, want %q", c.accept, proto, ctype, want)
		}
	}
	for h, want := range map[string]bool{"": false, "gzip": true, "*": false, "gzip, deflate": true,
		"identity;q=0,gzip;q=0": false, "identity;q=0.5,gzip": true, "gzip;q=0.5,identity": false, "br": false} {
		var vals []string
		if h != "" {
			vals = []string{h}
		}
		if gzipWanted(vals) != want {
			t.Errorf("Accept-Encoding %q: gzip %v", h, !want)
		}
	}
}

// TestScrapeProto serves the protobuf page over HTTP, gzip-compressed
// when asked; a page whose families collide is an error (500), as
// promhttp's was.
func TestScrapeProto(t *testing.T) {
	var mu sync.Mutex
	aggs := mixed()
	s := serve(t, func() []*aggregate.Agg {
		mu.Lock()
		defer mu.Unlock()
		return aggs
	})
	get := func(accept, encoding string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", "http://"+s.Addr()+"/metrics", nil)
		req.Header.Set("Accept", accept)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		// The transport, not a client: it leaves the body compressed.
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	want := writeProto(nil, page(t, []string{"func"}, mixed()...))
	for _, enc := range []string{"", "gzip"} {
		resp, body := get(protoType, enc)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != enc ||
			resp.Header.Get("Content-Type") != protoType+"; escaping=underscores" || !bytes.Equal(body, want) {
			t.Errorf("Accept-Encoding %q: %d %v\n%x\nwant\n%x", enc, resp.StatusCode, resp.Header, body, want)
		}
	}
	mu.Lock()
	aggs = []*aggregate.Agg{quantized("@x", nil, 1), quantized("@x-y", nil, 2), quantized("@x_y", nil, 3)}
	aggs = append(aggs, aggregate.New(&aggregate.Desc{Name: "@x_count", Func: program.AggCount}))
	aggs[3].Add(nil, []int64{1})
	mu.Unlock()
	resp, body := get("", "gzip")
	if resp.StatusCode != 500 || resp.Header.Get("Content-Encoding") != "" || !strings.Contains(string(body), "dtrace_x_count") ||
		!strings.Contains(string(body), "dtrace_x_y") {
		t.Errorf("colliding families: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}
