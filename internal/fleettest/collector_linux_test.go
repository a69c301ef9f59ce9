package fleettest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output/otlp"
)

// collector starts the test Collector with an OTLP receiver (HTTP on
// the first address returned, gRPC on the second) whose metrics and
// spans its file exporter writes to the file returned.
func collector(t *testing.T, dir string) (*server, string, string, string) {
	return collectorWith(t, dir, "", "")
}

// collectorWith is collector with receiver settings that both of the
// OTLP receiver's protocols take (YAML at their indentation: tls, auth)
// and extensions (YAML under extensions:, named in the service).
func collectorWith(t *testing.T, dir, protocol, extensions string) (*server, string, string, string) {
	t.Helper()
	bin := tool(t, "collector", ".")
	httpAddr, grpcAddr := outtest.FreeAddr(t), outtest.FreeAddr(t)
	out := filepath.Join(dir, "otlp.jsonl")
	conf := filepath.Join(dir, "collector.yaml")
	var names []string
	for _, l := range strings.Split(extensions, "\n") {
		if l != "" && l[0] != ' ' {
			names = append(names, strings.TrimSuffix(l, ":"))
		}
	}
	ext, svcExt := "", ""
	if len(names) > 0 {
		ext = "extensions:\n" + indent(extensions, "  ")
		svcExt = "  extensions: [" + strings.Join(names, ", ") + "]\n"
	}
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`%sreceivers:
  otlp:
    protocols:
      http:
        endpoint: %s
%s      grpc:
        endpoint: %s
%sexporters:
  file:
    path: %s
    flush_interval: 100ms
service:
%s  telemetry:
    metrics:
      level: none
  pipelines:
    metrics:
      receivers: [otlp]
      exporters: [file]
    traces:
      receivers: [otlp]
      exporters: [file]
`, ext, httpAddr, indent(protocol, "        "), grpcAddr, indent(protocol, "        "), out, svcExt)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, grpcAddr, bin, "--config="+conf)
	return s, httpAddr, grpcAddr, out
}

// indent puts prefix before each line of text.
func indent(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// expHistogram is the OTLP JSON of an exponential histogram data point
// (64-bit integers are strings there).
type expHistogram struct {
	Count     string `json:"count"`
	Scale     int    `json:"scale"`
	ZeroCount string `json:"zeroCount"`
	Positive  struct {
		Offset       int      `json:"offset"`
		BucketCounts []string `json:"bucketCounts"`
	} `json:"positive"`
	Negative struct {
		Offset       int      `json:"offset"`
		BucketCounts []string `json:"bucketCounts"`
	} `json:"negative"`
}

// lastQuantize finds, in the Collector's file, the last data point of
// the exponential histogram metric name.
func lastQuantize(t *testing.T, file, name string) *expHistogram {
	t.Helper()
	var last *expHistogram
	for _, doc := range fileDocs(t, file) {
		for _, m := range doc.metrics() {
			if m.Name == name && m.ExponentialHistogram != nil && len(m.ExponentialHistogram.DataPoints) > 0 {
				last = m.ExponentialHistogram.DataPoints[0]
			}
		}
	}
	return last
}

// fileDoc is one line of the Collector's file exporter: OTLP JSON of
// the metrics or spans of one export (only the fields the tests read).
type fileDoc struct {
	ResourceMetrics []struct {
		ScopeMetrics []struct {
			Metrics []fileMetric `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
	ResourceSpans []struct {
		ScopeSpans []struct {
			Spans []struct {
				Name string `json:"name"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

// fileMetric is a metric of a fileDoc: a sum or an exponential histogram.
type fileMetric struct {
	Name string `json:"name"`
	Sum  *struct {
		DataPoints []struct {
			AsInt string `json:"asInt"`
		} `json:"dataPoints"`
	} `json:"sum"`
	ExponentialHistogram *struct {
		DataPoints []*expHistogram `json:"dataPoints"`
	} `json:"exponentialHistogram"`
}

// fileDocs reads the Collector's file, skipping lines that do not parse
// (one the exporter is still writing).
func fileDocs(t *testing.T, file string) []fileDoc {
	t.Helper()
	var docs []fileDoc
	for _, l := range lines(t, file) {
		var doc fileDoc
		if json.Unmarshal([]byte(l), &doc) == nil {
			docs = append(docs, doc)
		}
	}
	return docs
}

// metrics lists the document's metrics in order.
func (d *fileDoc) metrics() []fileMetric {
	var out []fileMetric
	for _, rm := range d.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			out = append(out, sm.Metrics...)
		}
	}
	return out
}

// spans lists the names of the document's spans in order.
func (d *fileDoc) spans() []string {
	var out []string
	for _, rs := range d.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

var quantizeRow = regexp.MustCompile(`(?m)^\s+(-?\d+) \|[@ ]*\s(\d+)\s*$`)

// quantizeBuckets reads dtrace's quantize() histogram as OTLP buckets
// ("zero", "+i", "-i" by otlp.ExpIndex) and their counts.
func quantizeBuckets(t *testing.T, text string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, m := range quantizeRow.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseInt(m[1], 10, 64)
		n, _ := strconv.ParseUint(m[2], 10, 64)
		if n == 0 {
			continue
		}
		lo, hi := v, 2*v-1
		if v < 0 {
			lo, hi = 2*v+1, v
		}
		if v == 0 {
			lo, hi = 0, 0
		}
		i, pos, zero := otlp.ExpIndex(lo, hi)
		switch {
		case zero:
			out["zero"] += n
		case pos:
			out[fmt.Sprintf("+%d", i)] += n
		default:
			out[fmt.Sprintf("-%d", i)] += n
		}
	}
	return out
}

func (h *expHistogram) buckets() (map[string]uint64, uint64) {
	out := map[string]uint64{}
	if n, _ := strconv.ParseUint(h.ZeroCount, 10, 64); n > 0 {
		out["zero"] = n
	}
	for j, c := range h.Positive.BucketCounts {
		if n, _ := strconv.ParseUint(c, 10, 64); n > 0 {
			out[fmt.Sprintf("+%d", h.Positive.Offset+j)] = n
		}
	}
	for j, c := range h.Negative.BucketCounts {
		if n, _ := strconv.ParseUint(c, 10, 64); n > 0 {
			out[fmt.Sprintf("-%d", h.Negative.Offset+j)] = n
		}
	}
	count, _ := strconv.ParseUint(h.Count, 10, 64)
	return out, count
}

// TestQuantizeCollector: quantize() of 5,000 values (negative, zero and
// positive), exported over gRPC to a real Collector, comes back from
// its file as an exponential histogram of count 5,000 whose buckets hold
// what dtrace's own histogram printed, bucket for bucket.
func TestQuantizeCollector(t *testing.T) {
	dir, dtrace := build(t)
	target := testprog.BuildCalls(t, dir, "-O1")
	_, _, grpcAddr, out := collector(t, dir)
	cmd := exec.Command(dtrace, "-x", "otlp=http://"+grpcAddr, "-x", "otlpprotocol=grpc", "-x", "aggrate=500ms",
		"-n", `syscall::getppid:entry /pid == $target/ { @q = quantize(timestamp % 7 == 0 ? 0 : (int64_t)(timestamp % 3001) - 1500); }`,
		"-c", target+" 5000")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dtrace: %v\n%s", err, b)
	}
	want := quantizeBuckets(t, string(b))
	var total uint64
	for _, n := range want {
		total += n
	}
	if total != 5000 || want["zero"] == 0 || len(want) < 6 {
		t.Fatalf("dtrace's histogram holds %d values (%v), want 5000 with zeros, negatives and positives:\n%s", total, want, b)
	}
	var got map[string]uint64
	var count uint64
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if h := lastQuantize(t, out, "dtrace.q"); h != nil {
			if got, count = h.buckets(); count == 5000 {
				break
			}
		}
	}
	if count != 5000 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the Collector has count %d, buckets\n%v\nwant 5000,\n%v", count, got, want)
	}
}

// TestCollectorStopped kills the Collector while dtrace exports a span
// per getppid() and prints a line per call: dtrace prints every line and
// reports no drop of its own (its consumer never waited for the
// Collector), and says how many OTLP records it dropped. The calls come
// in two runs of a program: 10 while the Collector runs (it writes them:
// dtrace exports), then, once it is killed, 10,000 whose spans have
// nowhere to go. (Killing it during one burst asserted luck: on an idle
// fast machine dtrace had sent everything and exited before the kill.)
func TestCollectorStopped(t *testing.T) {
	dir, dtrace := build(t)
	calls, err := os.ReadFile(testprog.BuildCalls(t, dir, "-O1"))
	if err != nil {
		t.Fatal(err)
	}
	// A name of its own, so that the clause sees this test's calls alone.
	target := filepath.Join(dir, "stopcalls")
	if err := os.WriteFile(target, calls, 0o755); err != nil {
		t.Fatal(err)
	}
	col, httpAddr, _, out := collector(t, dir)
	// -b 16m: the 20,000 records come in a burst of milliseconds, and on
	// a loaded machine the consumer may get no CPU during it; the buffers
	// hold the whole burst, so that a drop here says the consumer was
	// held up, not that the machine was busy.
	cmd := exec.Command(dtrace, "-q", "-b", "16m", "-x", "otlp=http://"+httpAddr, "-x", "otlpspans=syscall::getppid:", "-x", "aggrate=100ms",
		"-n", `BEGIN { printf("ready\n"); }
		syscall::getppid:entry,syscall::getppid:return /execname == "stopcalls"/ { printf("%s\n", probename); @n = count(); }`)
	r := testprog.StartCmd(t, cmd)
	stdout, stderr := &r.Stdout, &r.Stderr
	printed := func() int {
		s := stdout.String()
		return strings.Count(s, "entry\n") + strings.Count(s, "return\n")
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		if err := r.Await(60*time.Second, ok); err != nil {
			t.Fatalf("%s: %v\n%s\n%s\n%s", what, err, stdout.String(), stderr.String(), col.log.String())
		}
	}
	wait("dtrace's BEGIN", func() bool { return strings.Contains(stdout.String(), "ready\n") })
	if b, err := exec.Command(target, "10").CombinedOutput(); err != nil {
		t.Fatalf("%s 10: %v\n%s", target, err, b)
	}
	wait("the Collector's first records", func() bool { return len(lines(t, out)) > 0 })
	col.stop()
	if b, err := exec.Command(target, "10000").CombinedOutput(); err != nil {
		t.Fatalf("%s 10000: %v\n%s", target, err, b)
	}
	wait("dtrace's 20,020 lines", func() bool { return printed() >= 20020 })
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-r.Done():
		if err := r.Err(); err != nil {
			t.Fatalf("dtrace: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("dtrace still runs 30 s after SIGINT\n%s", stderr.String())
	}
	if n := printed(); n != 20020 {
		t.Errorf("dtrace printed %d lines, want 20020", n)
	}
	if strings.Contains(stderr.String(), "drops on CPU") {
		t.Errorf("dtrace dropped records: %s", stderr.String())
	}
	m := regexp.MustCompile(`dtrace: (\d+) OTLP records? dropped`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no OTLP drop report:\n%s", stderr.String())
	}
	// The 10,000 spans of the second run had no receiver.
	if n, _ := strconv.Atoi(m[1]); n < 10000 {
		t.Errorf("%s OTLP records dropped, want at least the second run's 10,000 spans:\n%s", m[1], stderr.String())
	}
	t.Logf("%s", strings.TrimSpace(stderr.String()))
}
