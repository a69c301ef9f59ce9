package otlp

import (
	"math"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/program"
)

// The requests are written by hand (wire.go); these tests decode them
// with OTLP's generated Go types (TracesData and MetricsData have the
// export requests' one field) and compare, field by field (proto.Equal,
// which also fails on a field the types do not know), with the messages
// built from those types as the exporter built them before it wrote its
// own: a wrong field number, wire type or zero-value rule fails here.

// wireExporter is an exporter of fixed clocks that sends nowhere.
func wireExporter(t *testing.T) *Exporter {
	t.Helper()
	e, err := New(Config{URL: "http://127.0.0.1:1", Getenv: noEnv, Version: "v1.2", Kernel: "6.18.0",
		Now:   func() time.Time { return time.Unix(1_800_000_000, 123) },
		Clock: func() uint64 { return 5_000_000_000 },
		Names: func(pid, _ int) (string, string) { return map[int]string{42: "cat"}[pid], "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(nil, nil, 0) })
	return e
}

func pbStr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func pbInt(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func pbBool(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

// pbHost are the attributes hostAttrs gives, as the generated types.
func pbHost(e *Exporter, machine string) []*commonpb.KeyValue {
	host := e.host
	if machine != "host" {
		host = machine
	}
	return []*commonpb.KeyValue{pbStr("host.name", host), pbStr("os.type", "linux"), pbStr("os.version", "6.18.0"),
		pbStr("dtrace.version", "v1.2"), pbStr("dtrace.machine", machine)}
}

func pbScope() *commonpb.InstrumentationScope {
	return &commonpb.InstrumentationScope{Name: "dtrace", Version: "v1.2"}
}

// decodeEqual decodes body into got and compares it with want.
func decodeEqual(t *testing.T, body []byte, got, want proto.Message) {
	t.Helper()
	if err := proto.Unmarshal(body, got); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	if !proto.Equal(got, want) {
		t.Errorf("decoded:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
}

// TestWireSpans: spans of two processes, with attributes of every kind
// (strings empty, short and of 300 and 20,000 bytes, so that lengths
// take one, two and three bytes; ints negative, zero, positive and
// above the int64 range; bools true and false), a parent, a flow, and
// events.
func TestWireSpans(t *testing.T) {
	e := wireExporter(t)
	huge := strings.Repeat("x", 20000)
	vals := []program.Value{program.String(""), program.String(strings.Repeat("s", 300)),
		program.Int{Bits: math.MaxUint64 - 4, Size: 8, Signed: true}, program.Int{Bits: 0, Size: 4},
		program.Int{Bits: 1 << 40, Size: 8}, program.Int{Bits: math.MaxUint64, Size: 8}}
	var attrs []keyValue
	for i, v := range vals {
		attrs = append(attrs, kv("dtrace.trace."+string(rune('0'+i)), e.anyValue(v)))
	}
	attrs = append(attrs, kv("dtrace.printf", strValue(huge)), kv("t", boolValue(true)), kv("f", boolValue(false)))
	parent := &span{id: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}, name: "write", pid: 7, tid: 8, start: 100, end: 900,
		trace: [16]byte{15: 1}, attrs: []keyValue{kv("dtrace.probe", strValue("syscall::write:entry"))}}
	child := &span{id: [8]byte{9, 9, 9, 9, 9, 9, 9, 9}, name: "read", pid: 42, tid: 43, start: 200, end: 800, flow: 77,
		trace: [16]byte{0: 0xff, 15: 2}, parent: parent, attrs: attrs,
		events: []event{{time: e.unix(300), name: "syscall::getpid:entry", attrs: []keyValue{kv("k", intValue(-1))}},
			{time: e.unix(400), name: "syscall::getpid:return"}}}
	body, n := e.spansRequest([]*span{parent, child})
	if n != 4 {
		t.Errorf("%d records, want 4", n)
	}
	epoch := uint64(1_800_000_000_000_000_123 - 5_000_000_000)
	want := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: append([]*commonpb.KeyValue{pbStr("service.name", "pid 7"),
			pbInt("process.pid", 7), pbStr("process.executable.name", "pid 7")}, pbHost(e, "host")...)},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: pbScope(), Spans: []*tracepb.Span{{
			TraceId: parent.trace[:], SpanId: parent.id[:], Name: "write", Kind: tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: epoch + 100, EndTimeUnixNano: epoch + 900,
			Attributes: []*commonpb.KeyValue{pbStr("dtrace.probe", "syscall::write:entry"), pbInt("thread.id", 8)},
		}}}},
	}, {
		Resource: &resourcepb.Resource{Attributes: append([]*commonpb.KeyValue{pbStr("service.name", "cat"),
			pbInt("process.pid", 42), pbStr("process.executable.name", "cat")}, pbHost(e, "host")...)},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: pbScope(), Spans: []*tracepb.Span{{
			TraceId: child.trace[:], SpanId: child.id[:], ParentSpanId: parent.id[:], Name: "read",
			Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: epoch + 200, EndTimeUnixNano: epoch + 800,
			Attributes: []*commonpb.KeyValue{pbStr("dtrace.trace.0", ""), pbStr("dtrace.trace.1", strings.Repeat("s", 300)),
				pbInt("dtrace.trace.2", -5), pbInt("dtrace.trace.3", 0), pbInt("dtrace.trace.4", 1<<40),
				pbStr("dtrace.trace.5", "18446744073709551615"), pbStr("dtrace.printf", huge), pbBool("t", true),
				pbBool("f", false), pbInt("thread.id", 43), pbInt("dtrace.flowid", 77)},
			Events: []*tracepb.Span_Event{
				{TimeUnixNano: epoch + 300, Name: "syscall::getpid:entry", Attributes: []*commonpb.KeyValue{pbInt("k", -1)}},
				{TimeUnixNano: epoch + 400, Name: "syscall::getpid:return"}},
		}}}},
	}}}
	decodeEqual(t, body, &tracepb.TracesData{}, want)
}

// TestWireMetrics: a metric of each kind: a monotonic sum (count), a
// sum, a gauge (max), an exponential histogram (quantize) with negative,
// zero and positive buckets, a histogram (lquantize); and a resource per
// machine.
func TestWireMetrics(t *testing.T) {
	e := wireExporter(t)
	agg := func(name string, f program.AggFunc, key []program.Value, vals ...int64) *aggregate.Agg {
		a := aggregate.New(&aggregate.Desc{Name: name, Func: f, Base: 0, Levels: 2, Step: 10})
		slots := make([]int64, a.Desc.NSlots())
		for _, v := range vals {
			a.Desc.Update(slots, v, 1)
		}
		a.Add(key, slots)
		return a
	}
	vm := program.String("vm1")
	aggs := []*aggregate.Agg{
		agg("@calls", program.AggCount, []program.Value{vm, program.String("read")}, 0, 0, 0),
		agg("", program.AggSum, []program.Value{program.Int{Bits: math.MaxUint64 - 2, Size: 8, Signed: true}}, -7),
		agg("@top", program.AggMax, nil, 3, 10),
		agg("@q", program.AggQuantize, []program.Value{program.String("k")}, -5, -1, 0, 0, 1, 3, 8, 1000),
		agg("@l", program.AggLquantize, nil, -5, 5, 15, 25, 25),
	}
	now := uint64(1_800_000_000_000_000_999)
	body, n := e.metricsRequest(aggs, []string{"host", "vm1"}, now)
	if n != 5 {
		t.Errorf("%d points, want 5", n)
	}
	start := uint64(1_800_000_000_000_000_123)
	cum := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	resource := func(machine string, ms ...*metricspb.Metric) *metricspb.ResourceMetrics {
		return &metricspb.ResourceMetrics{
			Resource:     &resourcepb.Resource{Attributes: append([]*commonpb.KeyValue{pbStr("service.name", "dtrace")}, pbHost(e, machine)...)},
			ScopeMetrics: []*metricspb.ScopeMetrics{{Scope: pbScope(), Metrics: ms}}}
	}
	want := &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{
		resource("vm1", &metricspb.Metric{Name: "dtrace.calls", Description: "dtrace aggregation @calls = count()",
			Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{AggregationTemporality: cum, IsMonotonic: true,
				DataPoints: []*metricspb.NumberDataPoint{{Attributes: []*commonpb.KeyValue{pbStr("key0", "read")},
					StartTimeUnixNano: start, TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: 3}}}}}}),
		resource("host",
			&metricspb.Metric{Name: "dtrace.agg", Description: "dtrace aggregation @ = sum()",
				Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{AggregationTemporality: cum,
					DataPoints: []*metricspb.NumberDataPoint{{Attributes: []*commonpb.KeyValue{pbInt("key0", -3)},
						StartTimeUnixNano: start, TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: -7}}}}}},
			&metricspb.Metric{Name: "dtrace.top", Description: "dtrace aggregation @top = max()",
				Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
					DataPoints: []*metricspb.NumberDataPoint{{TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: 10}}}}}},
			&metricspb.Metric{Name: "dtrace.q", Description: "dtrace aggregation @q = quantize()",
				Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
					AggregationTemporality: cum,
					DataPoints: []*metricspb.ExponentialHistogramDataPoint{{Attributes: []*commonpb.KeyValue{pbStr("key0", "k")},
						StartTimeUnixNano: start, TimeUnixNano: now, Count: 8, ZeroCount: 2,
						// 1 in -1, 3 in 1, 8 in 3, 1000 in 9; -1 in -1, -5 in 2.
						Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -1, BucketCounts: []uint64{1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1}},
						Negative: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -1, BucketCounts: []uint64{1, 0, 0, 1}}}}}}},
			&metricspb.Metric{Name: "dtrace.l", Description: "dtrace aggregation @l = lquantize()",
				Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{AggregationTemporality: cum,
					DataPoints: []*metricspb.HistogramDataPoint{{StartTimeUnixNano: start, TimeUnixNano: now, Count: 5,
						BucketCounts: []uint64{1, 1, 1, 2}, ExplicitBounds: []float64{-1, 9, 19}}}}}}),
	}}
	decodeEqual(t, body, &metricspb.MetricsData{}, want)

	// A one-point exponential histogram alone, its scale not 0: the
	// sint32 fields.
	p := &expPoint{point: point{start: 1, time: 2}, count: 1, scale: -3, positive: &expBuckets{offset: 2, counts: []uint64{1}}}
	b := (&metric{name: "x", kind: kindExpHistogram, points: []dataPoint{p}}).appendTo(nil, 2)
	decodeEqual(t, b, &metricspb.ScopeMetrics{}, &metricspb.ScopeMetrics{Metrics: []*metricspb.Metric{{Name: "x",
		Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{AggregationTemporality: cum,
			DataPoints: []*metricspb.ExponentialHistogramDataPoint{{StartTimeUnixNano: 1, TimeUnixNano: 2, Count: 1, Scale: -3,
				Positive: &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: 2, BucketCounts: []uint64{1}}}}}}}}})
}
