package otlp

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Metric names an aggregation @NAME as the metric dtrace.NAME
// (dtrace.agg for @), as OpenTelemetry names metrics: dotted, lower
// case as written.
func Metric(a *aggregate.Agg) string {
	n := strings.TrimPrefix(a.Desc.Name, "@")
	if n == "" {
		n = "agg"
	}
	return "dtrace." + n
}

// metric turns one aggregation into an OTLP metric of cumulative data
// points, one per key, each key's values as attributes key0, key1, ...
// (or the names labels gives): start is when tracing started, now the
// time of the reading (Unix nanoseconds). It returns nil for an
// aggregation without entries.
func (e *Exporter) metric(a *aggregate.Agg, start, now uint64) (*metricspb.Metric, int) {
	entries := a.Entries()
	if len(entries) == 0 {
		return nil, 0
	}
	m := &metricspb.Metric{Name: Metric(a), Description: fmt.Sprintf("dtrace aggregation %s = %s()", aggName(a), a.Desc.Func)}
	cum := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	switch a.Desc.Func {
	case program.AggQuantize:
		h := &metricspb.ExponentialHistogram{AggregationTemporality: cum}
		for _, en := range entries {
			p := expHistogram(a, en)
			p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = e.keyAttrs(en.Key), start, now
			h.DataPoints = append(h.DataPoints, p)
		}
		m.Data = &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: h}
	case program.AggLquantize, program.AggLlquantize:
		h := &metricspb.Histogram{AggregationTemporality: cum}
		for _, en := range entries {
			p := explicitHistogram(a, en)
			p.Attributes, p.StartTimeUnixNano, p.TimeUnixNano = e.keyAttrs(en.Key), start, now
			h.DataPoints = append(h.DataPoints, p)
		}
		m.Data = &metricspb.Metric_Histogram{Histogram: h}
	default:
		var pts []*metricspb.NumberDataPoint
		for _, en := range entries {
			pts = append(pts, &metricspb.NumberDataPoint{Attributes: e.keyAttrs(en.Key), StartTimeUnixNano: start,
				TimeUnixNano: now, Value: &metricspb.NumberDataPoint_AsInt{AsInt: output.Value(a, en)}})
		}
		switch a.Desc.Func {
		case program.AggCount:
			// A count only grows (clear() starts it again, which a
			// cumulative sum's reader takes as a reset).
			m.Data = &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: pts, AggregationTemporality: cum, IsMonotonic: true}}
		case program.AggSum:
			m.Data = &metricspb.Metric_Sum{Sum: &metricspb.Sum{DataPoints: pts, AggregationTemporality: cum}}
		default:
			// min, max, avg, stddev: values of now, not totals.
			for _, p := range pts {
				p.StartTimeUnixNano = 0
			}
			m.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: pts}}
		}
	}
	return m, len(entries)
}

func aggName(a *aggregate.Agg) string {
	if a.Desc.Name == "" {
		return "@"
	}
	return a.Desc.Name
}

// ExpIndex is the index of the OTLP exponential histogram bucket of
// scale 0 that a quantize() bucket of values [lo, hi] goes to, and
// whether it is a positive bucket (for lo = hi = 0: the zero bucket,
// index 0). At scale 0 the bucket of index i holds the magnitudes
// (2^i, 2^(i+1)]: upper bounds inclusive, where quantize's lower bounds
// are, so each quantize bucket goes to the bucket that holds its bound
// of greatest magnitude, as the Prometheus native histograms of -x
// prometheus do (their index is this one plus 1): [1, 1] to -1 (it holds
// (1/2, 1]), [2, 3] to 1, [2^k, 2^(k+1)-1] to k, and negative buckets
// alike by magnitude. A value that is a power of two 2^k (k >= 1) is thus
// counted in bucket k, where an observed exponential histogram would put
// it in k-1.
func ExpIndex(lo, hi int64) (index int32, positive, zero bool) {
	switch {
	case lo == 0 && hi == 0:
		return 0, false, true
	case lo > 0:
		return int32(bits.Len64(uint64(hi)-1)) - 1, true, false
	}
	return int32(bits.Len64(uint64(-lo)-1)) - 1, false, false
}

// expHistogram is a quantize() entry as an exponential histogram of
// scale 0. The kernel keeps counts only: no sum, minimum or maximum.
func expHistogram(a *aggregate.Agg, en *aggregate.Entry) *metricspb.ExponentialHistogramDataPoint {
	p := &metricspb.ExponentialHistogramDataPoint{Scale: 0}
	pos, neg := map[int32]uint64{}, map[int32]uint64{}
	for _, b := range aggregate.Buckets(a, en) {
		lo, hi, n := b[0], b[1], b[2]
		if n <= 0 {
			continue
		}
		p.Count += uint64(n)
		i, positive, zero := ExpIndex(lo, hi)
		switch {
		case zero:
			p.ZeroCount += uint64(n)
		case positive:
			pos[i] += uint64(n)
		default:
			neg[i] += uint64(n)
		}
	}
	p.Positive, p.Negative = expBuckets(pos), expBuckets(neg)
	return p
}

// expBuckets lays counts by index out as OTLP's dense buckets.
func expBuckets(counts map[int32]uint64) *metricspb.ExponentialHistogramDataPoint_Buckets {
	if len(counts) == 0 {
		return nil
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range counts {
		lo, hi = min(lo, i), max(hi, i)
	}
	b := &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: lo, BucketCounts: make([]uint64, hi-lo+1)}
	for i, n := range counts {
		b.BucketCounts[i-lo] = n
	}
	return b
}

// explicitHistogram is an lquantize() or llquantize() entry as a
// histogram of explicit bounds: every bucket of the aggregation, each
// bound the largest value of its bucket (OTLP's bounds are inclusive
// upper bounds, and dtrace's values integers).
func explicitHistogram(a *aggregate.Agg, en *aggregate.Entry) *metricspb.HistogramDataPoint {
	d := a.Desc
	normal := int64(max(a.Normal, 1))
	p := &metricspb.HistogramDataPoint{}
	n := d.NSlots()
	for i := 0; i < n; i++ {
		var c int64
		if i < len(en.Data) {
			c = en.Data[i] / normal
		}
		p.BucketCounts = append(p.BucketCounts, uint64(max(c, 0)))
		p.Count += uint64(max(c, 0))
		if i < n-1 {
			_, hi := aggregate.BucketRange(d, i)
			p.ExplicitBounds = append(p.ExplicitBounds, float64(hi))
		}
	}
	return p
}

// keyAttrs are an entry's keys as attributes.
func (e *Exporter) keyAttrs(key []program.Value) []*commonpb.KeyValue {
	var out []*commonpb.KeyValue
	for i, k := range key {
		name := fmt.Sprintf("key%d", i)
		if i < len(e.labels) && e.labels[i] != "" {
			name = e.labels[i]
		}
		out = append(out, &commonpb.KeyValue{Key: name, Value: e.anyValue(k)})
	}
	return out
}

// anyValue is a D value as an attribute's value: integers as ints,
// strings as strings, stacks and symbols as their frames' names.
func (e *Exporter) anyValue(v program.Value) *commonpb.AnyValue {
	switch x := v.(type) {
	case program.String:
		return strValue(string(x))
	case program.Int:
		if x.Signed || x.Uint64() <= math.MaxInt64 {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: x.Int64()}}
		}
		return strValue(fmt.Sprint(x.Uint64()))
	case program.Stack:
		a := aggregate.New(&aggregate.Desc{Func: program.AggCount})
		a.Add([]program.Value{x}, []int64{0})
		if f := output.Fold(a, e.sym, aggregate.SortOptions{}); len(f) == 1 {
			return strValue(strings.Join(f[0].Frames, ";"))
		}
		return strValue("")
	case program.Sym:
		return strValue(output.FrameName(e.sym, x.Kind >= program.UserSym, x.PID, x.Addr))
	}
	return strValue(fmt.Sprint(v))
}

func strValue(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}

func intValue(n int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}
