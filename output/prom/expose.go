package prom

// The metrics served: each aggregation is a metric family, each of its
// entries a metric, as Prometheus's data model has them (the messages of
// its metrics.proto, which expfmt.go writes in either exposition format).

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// Metric types, as metrics.proto numbers them.
const (
	typeGauge     = 1
	typeHistogram = 4
)

// family is a metric family: one aggregation's metrics.
type family struct {
	name, help string
	typ        int // typeGauge or typeHistogram
	metrics    []metric
}

// label is a label's name and value.
type label struct{ name, value string }

// metric is one entry: a gauge's value or a histogram.
type metric struct {
	labels []label // sorted by name
	value  float64 // a gauge's
	hist   *histogram
}

// histogram is a classic histogram, native too for quantize().
type histogram struct {
	count   uint64
	sum     float64
	buckets []bucket // by upper bound, the +Inf one left out
	native  *native
}

// bucket is a classic histogram's bucket: the count of observations up
// to its upper bound.
type bucket struct {
	upper float64
	count uint64
}

// native is a native histogram of schema 0 and zero threshold 0.
type native struct {
	zero     uint64
	pos, neg nativeBuckets
}

// nativeBuckets are a native histogram's buckets on one side of zero:
// spans of consecutive indices (the first at its index, the others after
// a gap) and each count as the difference from the one before.
type nativeBuckets struct {
	spans  []span
	deltas []int64
}

type span struct {
	offset int32
	length uint32
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

// families turns aggregations into metric families. An entry whose label
// values are not UTF-8 is left out, as are the entries of a family whose
// label names repeat.
func (s *Server) families(aggs []*aggregate.Agg) []family {
	var out []family
	for _, a := range aggs {
		if a == nil {
			continue
		}
		f := family{name: Name(a), help: fmt.Sprintf("dtrace aggregation %s = %s()", aggLabel(a), a.Desc.Func), typ: typeGauge}
		hist := a.Desc.Func == program.AggQuantize || a.Desc.Func == program.AggLquantize || a.Desc.Func == program.AggLlquantize
		if hist {
			f.typ = typeHistogram
		}
		var names []string
		for _, e := range a.Entries() {
			if names == nil {
				names = s.labelNames(len(e.Key))
				if slices.ContainsFunc(names, func(n string) bool { return !validName(n) || strings.HasPrefix(n, "__") }) ||
					len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
					break
				}
			}
			m := metric{}
			vals := s.labelValues(e.Key)
			if slices.ContainsFunc(vals, func(v string) bool { return !utf8.ValidString(v) }) {
				continue
			}
			for i, n := range names {
				m.labels = append(m.labels, label{n, vals[i]})
			}
			slices.SortFunc(m.labels, func(x, y label) int { return strings.Compare(x.name, y.name) })
			if hist {
				m.hist = newHistogram(a, e)
			} else {
				m.value = float64(output.Value(a, e))
			}
			f.metrics = append(f.metrics, m)
		}
		if len(f.metrics) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// gather checks the families as one page and sorts them, and their
// metrics, as Prometheus's client libraries do: families by name,
// metrics by label values. Two aggregations whose names differ only in
// characters Prometheus does not take, or whose families' series would
// mix (@x a histogram, @x_count a gauge), or entries whose keys read the
// same, make the page an error rather than a wrong one.
func gather(fams []family) ([]family, error) {
	fams = slices.Clone(fams)
	slices.SortStableFunc(fams, func(x, y family) int { return strings.Compare(x.name, y.name) })
	var errs []string
	byName := map[string]bool{}
	for _, f := range fams {
		if byName[f.name] {
			errs = append(errs, fmt.Sprintf("two aggregations are the metric family %s", f.name))
		}
		byName[f.name] = true
	}
	for _, f := range fams {
		if f.typ != typeHistogram {
			continue
		}
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if byName[f.name+suffix] {
				errs = append(errs, fmt.Sprintf("the metric family %s collides with the histogram %s", f.name+suffix, f.name))
			}
		}
	}
	for i := range fams {
		ms := slices.Clone(fams[i].metrics)
		slices.SortStableFunc(ms, func(x, y metric) int {
			if len(x.labels) != len(y.labels) {
				return len(x.labels) - len(y.labels)
			}
			for k := range x.labels {
				if c := strings.Compare(x.labels[k].value, y.labels[k].value); c != 0 {
					return c
				}
			}
			return 0
		})
		for k := 1; k < len(ms); k++ {
			if slices.Equal(ms[k-1].labels, ms[k].labels) {
				errs = append(errs, fmt.Sprintf("%s%s twice", fams[i].name, labelText(ms[k].labels)))
			}
		}
		fams[i].metrics = ms
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d error(s) occurred:\n* %s", len(errs), strings.Join(errs, "\n* "))
	}
	return fams, nil
}

// labelText is labels as the text format writes them.
func labelText(labels []label) string {
	var b strings.Builder
	writeLabels(&b, labels, "", "")
	return b.String()
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
			names[i] = "key" + strconv.Itoa(i)
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
				vals[i] = strconv.FormatInt(x.Int64(), 10)
			} else {
				vals[i] = strconv.FormatUint(x.Uint64(), 10)
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

// newHistogram is a quantization's histogram: its count, its sum
// estimated from the buckets' lower bounds (the kernel keeps only
// counts), a classic bucket per non-empty bucket (upper bounds
// inclusive, as "le" is) and, for quantize(), the native buckets.
func newHistogram(a *aggregate.Agg, e *aggregate.Entry) *histogram {
	h := &histogram{}
	for _, b := range aggregate.Buckets(a, e) {
		lo, hi, n := b[0], b[1], b[2]
		if n <= 0 {
			continue
		}
		h.count += uint64(n)
		h.sum += float64(lo) * float64(n)
		if hi == math.MaxInt64 {
			continue
		}
		// Upper bounds that are one float64 make one bucket, of the
		// higher count.
		if k := len(h.buckets) - 1; k >= 0 && h.buckets[k].upper == float64(hi) {
			h.buckets[k].count = h.count
		} else {
			h.buckets = append(h.buckets, bucket{float64(hi), h.count})
		}
	}
	if a.Desc.Func == program.AggQuantize {
		h.native = newNative(a, e)
	}
	return h
}

// newNative gives quantize() entry e's counts as a native histogram of
// schema 0 (buckets at the powers of two, which quantize's are too). A
// quantize bucket [2^k, 2^(k+1)-1] goes to the native bucket that holds
// its upper bound, (2^k, 2^(k+1)]: only a value that is itself a power
// of two sits one native bucket higher than an observed native histogram
// would put it. lquantize and llquantize buckets are linear within a
// power of ten, which no native schema draws: they stay classic only.
func newNative(a *aggregate.Agg, e *aggregate.Entry) *native {
	pos, neg := map[int]int64{}, map[int]int64{}
	nh := &native{}
	for _, b := range aggregate.Buckets(a, e) {
		lo, hi, n := b[0], b[1], b[2]
		switch {
		case n <= 0:
		case lo == 0 && hi == 0:
			nh.zero += uint64(n)
		case lo > 0:
			pos[bits.Len64(uint64(hi-1))] += n
		default:
			neg[bits.Len64(uint64(-lo)-1)] += n
		}
	}
	nh.pos, nh.neg = nativeSpans(pos), nativeSpans(neg)
	return nh
}

// nativeSpans encodes counts by bucket index as a native histogram does.
func nativeSpans(counts map[int]int64) nativeBuckets {
	var nb nativeBuckets
	prevIdx, prev := 0, int64(0)
	for k, i := range slices.Sorted(maps.Keys(counts)) {
		switch {
		case k == 0:
			nb.spans = append(nb.spans, span{offset: int32(i), length: 1})
		case i == prevIdx+1:
			nb.spans[len(nb.spans)-1].length++
		default:
			nb.spans = append(nb.spans, span{offset: int32(i - prevIdx - 1), length: 1})
		}
		nb.deltas = append(nb.deltas, counts[i]-prev)
		prevIdx, prev = i, counts[i]
	}
	return nb
}
