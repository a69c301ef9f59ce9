package prom

// The two exposition formats a scraper may ask for in its Accept header:
// the text format (version 0.0.4), which every scraper reads, and the
// delimited protobuf one (each MetricFamily message of Prometheus's
// metrics.proto after its length as a varint), the only one that carries
// native histograms, which Prometheus asks for when they are enabled.
// Both are written here: the Prometheus client libraries would bring
// their own dependencies (protobuf among them) into dtrace for two small
// encoders.

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Content types, as Prometheus's client libraries announce them.
const (
	textType  = "text/plain; version=0.0.4; charset=utf-8"
	protoType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
)

// writeText writes families in the text format.
func writeText(b *strings.Builder, fams []family) {
	help := strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	for _, f := range fams {
		b.WriteString("# HELP " + f.name + " ")
		help.WriteString(b, f.help)
		b.WriteString("\n# TYPE " + f.name)
		if f.typ == typeHistogram {
			b.WriteString(" histogram\n")
		} else {
			b.WriteString(" gauge\n")
		}
		for _, m := range f.metrics {
			if m.hist == nil {
				sample(b, f.name, m.labels, "", m.value)
				continue
			}
			h := m.hist
			for _, bk := range h.buckets {
				sample(b, f.name+"_bucket", m.labels, formatFloat(bk.upper), float64(bk.count))
			}
			sample(b, f.name+"_bucket", m.labels, "+Inf", float64(h.count))
			sample(b, f.name+"_sum", m.labels, "", h.sum)
			sample(b, f.name+"_count", m.labels, "", float64(h.count))
		}
	}
}

// sample writes a line of the text format: name, labels (and le when
// given) and value.
func sample(b *strings.Builder, name string, labels []label, le string, v float64) {
	b.WriteString(name)
	writeLabels(b, labels, "le", le)
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// writeLabels writes {name="value",...}, extra="value" last when value is
// given, nothing when there are no labels.
func writeLabels(b *strings.Builder, labels []label, extra, value string) {
	if value != "" {
		labels = append(labels[:len(labels):len(labels)], label{extra, value})
	}
	for i, l := range labels {
		if i == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(l.name + `="`)
		labelEscaper.WriteString(b, l.value)
		b.WriteByte('"')
	}
	if len(labels) > 0 {
		b.WriteByte('}')
	}
}

func formatFloat(f float64) string {
	if f == 0 {
		return "0" // not -0
	}
	return strconv.FormatFloat(f, 'g', -1, 64) // +Inf, -Inf and NaN as the format has them
}

// Protobuf wire types.
const (
	wireVarint = 0
	wire64     = 1
	wireBytes  = 2
)

// pb appends protobuf fields.
type pb []byte

func (b pb) tag(field, wire int) pb { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire)) }

func (b pb) varint(field int, v uint64) pb { return binary.AppendUvarint(b.tag(field, wireVarint), v) }

// sint is a sint32 or sint64: zigzag-encoded.
func (b pb) sint(field int, v int64) pb { return b.varint(field, uint64(v<<1)^uint64(v>>63)) }

func (b pb) double(field int, v float64) pb {
	return binary.LittleEndian.AppendUint64(b.tag(field, wire64), math.Float64bits(v))
}

func (b pb) msg(field int, s []byte) pb {
	return append(binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(s))), s...)
}

func (b pb) str(field int, s string) pb {
	return append(binary.AppendUvarint(b.tag(field, wireBytes), uint64(len(s))), s...)
}

// Field numbers of metrics.proto's messages.
const (
	familyName, familyHelp, familyType, familyMetric = 1, 2, 3, 4
	metricLabel, metricGauge, metricHistogram        = 1, 2, 7
	labelName, labelValue                            = 1, 2
	gaugeValue                                       = 1
	histCount, histSum, histBucket                   = 1, 2, 3
	histSchema, histZeroThreshold, histZeroCount     = 5, 6, 7
	histNegSpan, histNegDelta                        = 9, 10
	histPosSpan, histPosDelta                        = 12, 13
	bucketCount, bucketUpper                         = 1, 2
	spanOffset, spanLength                           = 1, 2
)

// writeProto writes families as delimited MetricFamily messages, their
// fields in the order of their numbers, as protobuf's own encoder does.
func writeProto(out []byte, fams []family) []byte {
	for _, f := range fams {
		fb := pb(nil).str(familyName, f.name).str(familyHelp, f.help).varint(familyType, uint64(f.typ))
		for _, m := range f.metrics {
			fb = fb.msg(familyMetric, encodeMetric(m))
		}
		out = append(binary.AppendUvarint(out, uint64(len(fb))), fb...)
	}
	return out
}

func encodeMetric(m metric) pb {
	var mb pb
	for _, l := range m.labels {
		mb = mb.msg(metricLabel, pb(nil).str(labelName, l.name).str(labelValue, l.value))
	}
	if m.hist == nil {
		return mb.msg(metricGauge, pb(nil).double(gaugeValue, m.value))
	}
	h := m.hist
	hb := pb(nil).varint(histCount, h.count).double(histSum, h.sum)
	for _, bk := range h.buckets {
		hb = hb.msg(histBucket, pb(nil).varint(bucketCount, bk.count).double(bucketUpper, bk.upper))
	}
	if n := h.native; n != nil {
		// Schema 0, zero threshold 0: set, not left out, so that the
		// histogram reads as native.
		hb = hb.sint(histSchema, 0).double(histZeroThreshold, 0).varint(histZeroCount, n.zero)
		hb = n.neg.encode(hb, histNegSpan, histNegDelta)
		hb = n.pos.encode(hb, histPosSpan, histPosDelta)
	}
	return mb.msg(metricHistogram, hb)
}

// encode appends the spans and the deltas (repeated, not packed, as in
// proto2 they are).
func (nb nativeBuckets) encode(b pb, spanField, deltaField int) pb {
	for _, s := range nb.spans {
		b = b.msg(spanField, pb(nil).sint(spanOffset, int64(s.offset)).varint(spanLength, uint64(s.length)))
	}
	for _, d := range nb.deltas {
		b = b.sint(deltaField, d)
	}
	return b
}

// accept is a clause of an Accept header.
type accept struct {
	typ, sub string
	q        float64
	params   map[string]string
}

// parseAccept parses an Accept header, its clauses by preference: by q,
// then a type before */*, a subtype before type/*.
func parseAccept(h string) []accept {
	var out []accept
	for _, part := range strings.Split(h, ",") {
		fields := strings.Split(part, ";")
		typ, sub, ok := strings.Cut(strings.TrimSpace(fields[0]), "/")
		if !ok && typ == "*" {
			sub, ok = "*", true
		}
		if !ok || strings.Contains(sub, "/") {
			continue
		}
		a := accept{typ: strings.TrimSpace(typ), sub: strings.TrimSpace(sub), q: 1, params: map[string]string{}}
		for _, p := range fields[1:] {
			k, v, ok := strings.Cut(p, "=")
			if !ok || strings.Contains(v, "=") {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if k == "q" {
				a.q, _ = strconv.ParseFloat(v, 32)
			} else {
				a.params[k] = v
			}
		}
		out = append(out, a)
	}
	rank := func(a accept) int {
		switch {
		case a.typ == "*":
			return 2
		case a.sub == "*":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(x, y accept) int {
		if x.q != y.q {
			return compareFloat(y.q, x.q)
		}
		return rank(x) - rank(y)
	})
	return out
}

// negotiate gives the format the Accept header h prefers (the delimited
// protobuf one when a clause asks for it before the text one, the text
// one otherwise) and the Content-Type to announce it with: its escaping
// parameter (how names Prometheus's legacy character set lacks would be
// escaped; dtrace's have none) echoes the header's, as Prometheus's
// client libraries do.
func negotiate(h string) (proto bool, contentType string) {
	escaping := "underscores"
	for _, a := range parseAccept(h) {
		switch e := a.params["escaping"]; e {
		case "allow-utf-8", "underscores", "dots", "values":
			escaping = e
		}
		if matches(a, "application", "vnd.google.protobuf") && a.params["proto"] == "io.prometheus.client.MetricFamily" &&
			a.params["encoding"] == "delimited" {
			return true, protoType + "; escaping=" + escaping
		}
		if a.typ == "text" && a.sub == "plain" && (a.params["version"] == "" || a.params["version"] == "0.0.4") {
			break
		}
	}
	return false, textType + "; escaping=" + escaping
}

func matches(a accept, typ, sub string) bool {
	return (a.typ == "*" || a.typ == typ) && (a.sub == "*" || a.sub == sub)
}

func compareFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// gzipWanted reports whether the Accept-Encoding header values h prefer
// gzip to no encoding.
func gzipWanted(h []string) bool {
	identity, gzip := -1.0, -1.0
	for _, v := range h {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name, q := strings.TrimSpace(name), 1.0
			if k, v, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.TrimSpace(k) == "q" {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			if name == "identity" || name == "*" {
				identity = max(identity, q)
			}
			if name == "gzip" || name == "*" {
				gzip = max(gzip, q)
			}
		}
	}
	return gzip > 0 && gzip > identity
}
