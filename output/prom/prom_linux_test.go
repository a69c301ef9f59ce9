//go:build linux

package prom

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
	"github.com/dtrace-go/dtrace/output/internal/outtest"
)

// start starts cmd and, when the test ends, stops it with sig and waits
// for it.
func start(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(sig)
		cmd.Wait()
	})
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// poll calls f every 200ms until it reports true or d has passed.
func poll(d time.Duration, f func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return false
}

func get(u string) string {
	resp, err := http.Get(u)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestPrometheus counts 5,000 getppid calls in @calls with
// -x prometheus: /metrics serves dtrace_calls 5000 while dtrace runs,
// promtool check metrics accepts the page, and a real Prometheus scraping
// it stores 5000, and 5000 observations of @q = quantize(5) as a native
// histogram. A busy address is refused before anything is attached.
func TestPrometheus(t *testing.T) {
	dtrace, target := outtest.Build(t)
	dir := t.TempDir()
	tgt := filepath.Join(dir, "promtgt")
	if b, err := os.ReadFile(target); err != nil || os.WriteFile(tgt, b, 0o755) != nil {
		t.Fatal("copying the target", err)
	}
	addr := freePort(t)

	cmd := exec.Command(dtrace, "-x", "prometheus="+addr,
		"-n", `BEGIN { printf("ready\n"); } syscall::getppid:entry /execname == "promtgt"/ { @calls = count(); @q = quantize(5); }`)
	var stdout, stderr lockedbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start(t, cmd, syscall.SIGINT)
	// BEGIN's output comes once the probes are attached.
	if !poll(60*time.Second, func() bool { return strings.Contains(stdout.String(), "ready") }) {
		t.Fatalf("dtrace did not start: %s", stderr.String())
	}
	// The address is now busy.
	outtest.Refused(t, dtrace, "prometheus="+addr)
	if out, err := exec.Command(tgt, "5000").CombinedOutput(); err != nil {
		t.Fatalf("target: %v %s", err, out)
	}
	var page string
	if !poll(30*time.Second, func() bool {
		page = get("http://" + addr + "/metrics")
		return strings.Contains(page, "\ndtrace_calls 5000\n")
	}) {
		t.Fatalf("no dtrace_calls 5000 in:\n%s\nstderr: %s", page, stderr.String())
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		c := exec.Command(promtool, "check", "metrics")
		c.Stdin = strings.NewReader(page)
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}

	prometheus, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus (Debian's prometheus package)")
	}
	web := freePort(t)
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dtrace
    static_configs:
      - targets: ["%s"]
`, addr)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := exec.Command(prometheus, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+web, "--enable-feature=native-histograms")
	var plog lockedbuf.Buffer
	p.Stdout, p.Stderr = &plog, &plog
	start(t, p, syscall.SIGTERM)
	for _, q := range []string{`dtrace_calls{job="dtrace"}`, `histogram_count(dtrace_q{job="dtrace"})`} {
		queryValue(t, web, q, "5000", &plog)
	}
}

// queryValue waits until Prometheus at web answers query with one sample
// of value want.
func queryValue(t *testing.T, web, q, want string, plog *lockedbuf.Buffer) {
	t.Helper()
	query := "http://" + web + "/api/v1/query?query=" + url.QueryEscape(q)
	var last string
	if !poll(90*time.Second, func() bool {
		last = get(query)
		var r struct {
			Status string
			Data   struct {
				Result []struct {
					Value [2]any
				}
			}
		}
		if json.Unmarshal([]byte(last), &r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
			return false
		}
		return r.Data.Result[0].Value[1] == want
	}) {
		t.Fatalf("Prometheus: %s is not %s; last answer %s\nlog:\n%s", q, want, last, plog.String())
	}
}
