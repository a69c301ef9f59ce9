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

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
)

// jaeger starts Jaeger (all in one, memory storage) with its OTLP
// receiver on the address returned first and its query API on the
// second.
func jaeger(t *testing.T, dir string) (*server, string, string) {
	t.Helper()
	bin := tool(t, "jaeger", "github.com/jaegertracing/jaeger/cmd/jaeger")
	otlpHTTP, otlpGRPC, query, queryGRPC := outtest.FreeAddr(t), outtest.FreeAddr(t), outtest.FreeAddr(t), outtest.FreeAddr(t)
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
    enable_tracing: false
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

// services lists the services Jaeger at query knows, for a failure's
// message.
func services(query string) string {
	resp, err := http.Get("http://" + query + "/api/services")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// TestJaegerFlow traces producer | filter | consumer, 100 requests (the
// producer starts a new flow for each line it writes), with the read and
// write system calls of the three as spans: Jaeger holds 100 traces of
// the producer, each with spans of all three processes, named, one root
// (the producer's write), and every other span a child of the write of
// the stage before: the filter's reads and write of the producer's
// write, the consumer's of the filter's.
func TestJaegerFlow(t *testing.T) {
	dir, dtrace := build(t)
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
	jg, otlpHTTP, query := jaeger(t, dir)
	script := filepath.Join(dir, "pipeline.sh")
	if err := os.WriteFile(script, []byte(fmt.Sprintf("%s produce 100 | %s relay | %s relay >/dev/null\n", progs[0], progs[1], progs[2])), 0o755); err != nil {
		t.Fatal(err)
	}
	// The reads of standard input and the writes of standard output
	// only (not the dynamic linker's reads of libraries, which would be
	// spans of no flow, traces of their own). A relay's part of a
	// request ends with its write (newflow() at its return): otherwise
	// the filter's end-of-file read after the last request's write is
	// a span of that request too, and when it begins before the
	// consumer's read of the write returns, the times alone cannot tell
	// which of the two handed the request over (the consumer's spans
	// then hang under the read, 1 trace of 100 in a run).
	cmd := exec.Command(dtrace, "-q", "-x", "otlp=http://"+otlpHTTP, "-x", "otlpspans=syscall::read:,syscall::write:", "-n", `
syscall::write:entry /execname == "jproducer" && arg0 == 1/ { newflow(); flow->req = ++n; }
syscall::read:entry, syscall::write:entry
/(execname == "jproducer" || execname == "jfilter" || execname == "jconsumer") && arg0 <= 1/ { self->io = 1; }
syscall::read:entry, syscall::write:entry, syscall::read:return, syscall::write:return /self->io/ { }
syscall::write:return /self->io && execname != "jproducer"/ { self->io = 0; newflow(); }
syscall::read:return, syscall::write:return /self->io/ { self->io = 0; }
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
		t.Fatalf("%d traces of jproducer in Jaeger, want 100 (%v); services %s\ndtrace:\n%s\nJaeger:\n%s",
			len(ts), err, services(query), out, tail(jg.log.String(), 4000))
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
	// The processes are named (service.name) though they were gone
	// before dtrace exported their spans.
	if got := services(query); !strings.Contains(got, `"data":["j`) || strings.Contains(got, "pid ") {
		t.Errorf("Jaeger's services: %s", got)
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
	// The producer wrote once; the filter and the consumer each read
	// (a byte at a time) and wrote once; each of their spans is a
	// child of the write of the stage before.
	writes, reads := map[string]int{}, map[string]int{}
	for s := range svc {
		switch op[s] {
		case "write":
			writes[svc[s]]++
		case "read":
			reads[svc[s]]++
		default:
			return fmt.Sprintf("a span %q", op[s])
		}
		if svc[s] == "jproducer" {
			continue
		}
		want := map[string]string{"jfilter": "jproducer", "jconsumer": "jfilter"}[svc[s]]
		if p := parent[s]; svc[p] != want || op[p] != "write" {
			return fmt.Sprintf("%s's %s has parent %s's %s, want %s's write", svc[s], op[s], svc[p], op[p], want)
		}
	}
	if writes["jproducer"] != 1 || reads["jproducer"] != 0 || writes["jfilter"] != 1 || writes["jconsumer"] != 1 ||
		reads["jfilter"] < 2 || reads["jconsumer"] < 2 {
		return fmt.Sprintf("writes %v, reads %v: want one write each, two reads or more of the filter and the consumer", writes, reads)
	}
	return ""
}
