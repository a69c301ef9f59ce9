package fleettest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// jaeger starts Jaeger (all in one, memory storage) with its OTLP
// receiver on the address returned first and its query API on the
// second.
func jaeger(t *testing.T, dir string) (*server, string, string) {
	t.Helper()
	bin := tool(t, "jaeger", "github.com/jaegertracing/jaeger/cmd/jaeger")
	otlpHTTP, otlpGRPC, query, queryGRPC := freePort(t), freePort(t), freePort(t), freePort(t)
	conf := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
      grpc:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, query, queryGRPC, otlpHTTP, otlpGRPC)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, query, bin, "--config="+conf)
	return s, otlpHTTP, query
}

// jaegerTrace is a trace as Jaeger's HTTP API gives it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		ProcessID     string `json:"processID"`
		StartTime     int64  `json:"startTime"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
	Warnings []string `json:"warnings"`
}

// traces asks Jaeger at query for the traces of a service.
func traces(query, service string) ([]jaegerTrace, error) {
	resp, err := http.Get("http://" + query + "/api/traces?service=" + service + "&limit=1000&lookback=1h")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%v: %s", err, b)
	}
	return r.Data, nil
}

// TestJaegerFlow traces producer | filter | consumer, 100 requests (the
// producer starts a new flow for each line it writes), with the read and
// write system calls of the three as spans: Jaeger holds 100 traces of
// the producer, each with spans of all three processes, one root (the
// producer's write), every other span's parent in the trace, and the
// consumer's write a descendant of the filter's write, which descends
// from the producer's.
func TestJaegerFlow(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF")
	}
	dir := t.TempDir()
	dtrace := testprog.BuildCmd(t, dir, "dtrace")
	src, err := os.ReadFile(filepath.Join(here(), "..", "flowtest", "testdata", "flowprog.c"))
	if err != nil {
		t.Fatal(err)
	}
	bin := testprog.BuildSource(t, "flowprog", string(src), "-O2")
	var progs []string
	for _, n := range []string{"jproducer", "jfilter", "jconsumer"} {
		data, _ := os.ReadFile(bin)
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	_, otlpHTTP, query := jaeger(t, dir)
	script := filepath.Join(dir, "pipeline.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("%s produce 100 | %s relay | %s relay >/dev/null\n", progs[0], progs[1], progs[2])), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dtrace, "-q", "-x", "otlp=http://"+otlpHTTP, "-x", "otlpspans=syscall::read:,syscall::write:", "-n", `
syscall::write:entry /execname == "jproducer"/ { newflow(); flow->req = ++n; }
syscall::read:entry, syscall::read:return, syscall::write:entry, syscall::write:return
/execname == "jproducer" || execname == "jfilter" || execname == "jconsumer"/ { }
`, "-c", "/bin/sh "+script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dtrace: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "OTLP") {
		t.Fatalf("dtrace: %s", out)
	}
	var ts []jaegerTrace
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if ts, err = traces(query, "jproducer"); err == nil && len(ts) >= 100 {
			break
		}
	}
	if len(ts) != 100 {
		t.Fatalf("%d traces of jproducer in Jaeger, want 100 (%v)", len(ts), err)
	}
	bad := 0
	for _, tr := range ts {
		if problem := checkTrace(tr); problem != "" {
			if bad++; bad <= 5 {
				t.Errorf("trace %s: %s", tr.TraceID, problem)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of 100 traces are wrong", bad)
	}
}

// checkTrace says what is wrong with a trace of the pipeline, "" if
// nothing.
func checkTrace(tr jaegerTrace) string {
	if len(tr.Warnings) > 0 {
		return fmt.Sprint("warnings: ", tr.Warnings)
	}
	svc := map[string]string{}    // span → service
	parent := map[string]string{} // span → parent span
	op := map[string]string{}
	var roots []string
	services := map[string]bool{}
	for _, s := range tr.Spans {
		svc[s.SpanID] = tr.Processes[s.ProcessID].ServiceName
		op[s.SpanID] = s.OperationName
		services[svc[s.SpanID]] = true
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" {
				parent[s.SpanID] = r.SpanID
			}
		}
		if parent[s.SpanID] == "" {
			roots = append(roots, s.SpanID)
		}
	}
	var names []string
	for s := range services {
		names = append(names, s)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "jconsumer,jfilter,jproducer" {
		return fmt.Sprint("services ", names)
	}
	if len(roots) != 1 || svc[roots[0]] != "jproducer" || op[roots[0]] != "write" {
		return fmt.Sprint("roots ", roots)
	}
	for s, p := range parent {
		if _, ok := svc[p]; !ok {
			return fmt.Sprintf("span %s's parent %s is not in the trace", s, p)
		}
	}
	// Each of the filter's and the consumer's writes descends from the
	// stage before's write.
	for s := range svc {
		if op[s] != "write" || svc[s] == "jproducer" {
			continue
		}
		want := map[string]string{"jfilter": "jproducer", "jconsumer": "jfilter"}[svc[s]]
		p := parent[s]
		if svc[p] != want || op[p] != "write" {
			return fmt.Sprintf("%s's write has parent %s's %s, want %s's write", svc[s], svc[p], op[p], want)
		}
	}
	return ""
}
