package otlp

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

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

// The kinds of metric, by their field numbers in Metric's data oneof.
const (
	kindGauge        = 5
	kindSum          = 7
	kindHistogram    = 9
	kindExpHistogram = 10
)

// metric is an OTLP Metric: a gauge or a sum of number data points, a
// histogram of explicit bounds, or an exponential histogram, cumulative
// (but for the gauge, which has no temporality).
type metric struct {
	name, description string
	kind              int
	monotonic         bool // of a sum
	points            []dataPoint
}

// dataPoint is a data point of any kind: appendTo appends it as field 1
// of its metric's data.
type dataPoint interface {
	appendTo(b []byte) []byte
}

// point is what data points of every kind have: attributes, and the
// start (0: none) and time of the reading, Unix ns.
type point struct {
	attrs       []keyValue
	start, time uint64
}

// begin begins the data point in field 1 (of Gauge, Sum, Histogram
// and ExponentialHistogram) with its times.
func (p *point) begin(b []byte) ([]byte, int) {
	b, at := begin(b, 1)
	b = fixed64Opt(b, 2, p.start)
	return fixed64Opt(b, 3, p.time), at
}

// numberPoint is a NumberDataPoint of an integer value.
type numberPoint struct {
	point
	value int64
}

// histogramPoint is a HistogramDataPoint: counts per bucket, and the
// buckets' bounds.
type histogramPoint struct {
	point
	count        uint64
	bucketCounts []uint64
	bounds       []float64
}

// expPoint is an ExponentialHistogramDataPoint: no sum, minimum or
// maximum.
type expPoint struct {
	point
	count, zeroCount   uint64
	scale              int32
	positive, negative *expBuckets // nil: none
}

// expBuckets are an exponential histogram's dense buckets from offset.
type expBuckets struct {
	offset int32
	counts []uint64
}

// cumulative is AGGREGATION_TEMPORALITY_CUMULATIVE.
const cumulative = 2

// appendTo appends m as field num (ScopeMetrics' metrics).
func (m *metric) appendTo(b []byte, num int) []byte {
	b, at := begin(b, num)
	b = stringOpt(b, 1, m.name)
	b = stringOpt(b, 2, m.description)
	b, data := begin(b, m.kind)
	for _, p := range m.points {
		b = p.appendTo(b)
	}
	if m.kind != kindGauge {
		b = varintField(b, 2, cumulative)
	}
	if m.monotonic {
		b = varintField(b, 3, 1)
	}
	return end(end(b, data), at)
}

func (p *numberPoint) appendTo(b []byte) []byte {
	b, at := p.begin(b)
	b = fixed64Field(b, 6, uint64(p.value)) // as_int, sfixed64
	return end(appendAttrs(b, 7, p.attrs), at)
}

func (p *histogramPoint) appendTo(b []byte) []byte {
	b, at := p.begin(b)
	b = packedFixed64(fixed64Opt(b, 4, p.count), 6, p.bucketCounts)
	b = packedDoubles(b, 7, p.bounds)
	return end(appendAttrs(b, 9, p.attrs), at)
}

func (p *expPoint) appendTo(b []byte) []byte {
	b, at := p.begin(b)
	b = fixed64Opt(b, 4, p.count)
	if p.scale != 0 {
		b = sint32Field(b, 6, p.scale)
	}
	b = p.negative.appendTo(p.positive.appendTo(fixed64Opt(b, 7, p.zeroCount), 8), 9)
	return end(appendAttrs(b, 1, p.attrs), at)
}

// appendTo appends the buckets as field num (nothing when nil).
func (x *expBuckets) appendTo(b []byte, num int) []byte {
	if x == nil {
		return b
	}
	b, at := begin(b, num)
	if x.offset != 0 {
		b = sint32Field(b, 1, x.offset)
	}
	b = packedVarints(b, 2, x.counts)
	return end(b, at)
}

// metric turns one aggregation into an OTLP metric of cumulative data
// points, one per key, each key's values as attributes key0, key1, ...
// (or the names labels gives): start is when tracing started, now the
// time of the reading (Unix nanoseconds). It returns nil for an
// aggregation without entries.
func (e *Exporter) metric(a *aggregate.Agg, start, now uint64) (*metric, int) {
	entries := a.Entries()
	if len(entries) == 0 {
		return nil, 0
	}
	m := &metric{name: Metric(a), description: fmt.Sprintf("dtrace aggregation %s = %s()", aggName(a), a.Desc.Func)}
	switch a.Desc.Func {
	case program.AggQuantize:
		m.kind = kindExpHistogram
		for _, en := range entries {
			p := expHistogram(a, en)
			p.point = point{e.keyAttrs(en.Key), start, now}
			m.points = append(m.points, p)
		}
	case program.AggLquantize, program.AggLlquantize:
		m.kind = kindHistogram
		for _, en := range entries {
			p := explicitHistogram(a, en)
			p.point = point{e.keyAttrs(en.Key), start, now}
			m.points = append(m.points, p)
		}
	default:
		switch a.Desc.Func {
		case program.AggCount:
			// A count only grows (clear() starts it again, which a
			// cumulative sum's reader takes as a reset).
			m.kind, m.monotonic = kindSum, true
		case program.AggSum:
			m.kind = kindSum
		default:
			// min, max, avg, stddev: values of now, not totals.
			m.kind, start = kindGauge, 0
		}
		for _, en := range entries {
			m.points = append(m.points, &numberPoint{point{e.keyAttrs(en.Key), start, now}, output.Value(a, en)})
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
func expHistogram(a *aggregate.Agg, en *aggregate.Entry) *expPoint {
	p := &expPoint{scale: 0}
	pos, neg := map[int32]uint64{}, map[int32]uint64{}
	for _, b := range aggregate.Buckets(a, en) {
		lo, hi, n := b[0], b[1], b[2]
		if n <= 0 {
			continue
		}
		p.count += uint64(n)
		i, positive, zero := ExpIndex(lo, hi)
		switch {
		case zero:
			p.zeroCount += uint64(n)
		case positive:
			pos[i] += uint64(n)
		default:
			neg[i] += uint64(n)
		}
	}
	p.positive, p.negative = denseBuckets(pos), denseBuckets(neg)
	return p
}

// denseBuckets lays counts by index out as OTLP's dense buckets.
func denseBuckets(counts map[int32]uint64) *expBuckets {
	if len(counts) == 0 {
		return nil
	}
	lo, hi := int32(math.MaxInt32), int32(math.MinInt32)
	for i := range counts {
		lo, hi = min(lo, i), max(hi, i)
	}
	b := &expBuckets{offset: lo, counts: make([]uint64, hi-lo+1)}
	for i, n := range counts {
		b.counts[i-lo] = n
	}
	return b
}

// explicitHistogram is an lquantize() or llquantize() entry as a
// histogram of explicit bounds: every bucket of the aggregation, each
// bound the largest value of its bucket (OTLP's bounds are inclusive
// upper bounds, and dtrace's values integers).
func explicitHistogram(a *aggregate.Agg, en *aggregate.Entry) *histogramPoint {
	d := a.Desc
	normal := int64(max(a.Normal, 1))
	p := &histogramPoint{}
	n := d.NSlots()
	for i := 0; i < n; i++ {
		var c int64
		if i < len(en.Data) {
			c = en.Data[i] / normal
		}
		p.bucketCounts = append(p.bucketCounts, uint64(max(c, 0)))
		p.count += uint64(max(c, 0))
		if i < n-1 {
			_, hi := aggregate.BucketRange(d, i)
			p.bounds = append(p.bounds, float64(hi))
		}
	}
	return p
}

// keyAttrs are an entry's keys as attributes.
func (e *Exporter) keyAttrs(key []program.Value) []keyValue {
	var out []keyValue
	for i, k := range key {
		name := fmt.Sprintf("key%d", i)
		if i < len(e.labels) && e.labels[i] != "" {
			name = e.labels[i]
		}
		out = append(out, kv(name, e.anyValue(k)))
	}
	return out
}

// anyValue is a D value as an attribute's value: integers as ints,
// strings as strings, stacks and symbols as their frames' names.
func (e *Exporter) anyValue(v program.Value) anyValue {
	switch x := v.(type) {
	case program.String:
		return strValue(string(x))
	case program.Int:
		if x.Signed || x.Uint64() <= math.MaxInt64 {
			return intValue(x.Int64())
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
