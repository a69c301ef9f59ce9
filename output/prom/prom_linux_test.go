//go:build linux

package prom

import (
	"crypto/tls"
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

	"golang.org/x/crypto/bcrypt"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
	"github.com/dtrace-go/dtrace/internal/testutil/testcert"
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

// build builds dtrace and the target, which it copies as promtgt (the
// name the probes' predicates select) into the test's directory, and
// returns dtrace, the directory and the target.
func build(t *testing.T) (dtrace, dir, tgt string) {
	dtrace, target := outtest.Build(t)
	dir = t.TempDir()
	tgt = filepath.Join(dir, "promtgt")
	if b, err := os.ReadFile(target); err != nil || os.WriteFile(tgt, b, 0o755) != nil {
		t.Fatal("copying the target", err)
	}
	return dtrace, dir, tgt
}

// TestPrometheus counts 5,000 getppid calls in @calls with
// -x prometheus: /metrics serves dtrace_calls 5000 while dtrace runs,
// promtool check metrics accepts the page, and a real Prometheus scraping
// it stores 5000, and 5000 observations of @q = quantize(5) as a native
// histogram. A busy address is refused before anything is attached.
func TestPrometheus(t *testing.T) {
	dtrace, dir, tgt := build(t)
	addr := outtest.FreeAddr(t)

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
	web := outtest.FreeAddr(t)
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

// TestPrometheusTLS serves @calls on every address (0.0.0.0) with a web
// configuration of TLS and basic authentication: a real Prometheus that
// trusts the test's CA and has the password stores dtrace_calls 5000,
// one without the password fails its scrapes (401), and so does a plain
// request. Without the file the same address is refused at start-up.
func TestPrometheusTLS(t *testing.T) {
	dtrace, dir, tgt := build(t)
	certs := testcert.Write(t, dir)
	const pass = "s3cret"
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webconf := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(webconf, []byte(fmt.Sprintf(`tls_server_config:
  cert_file: server.pem
  key_file: server-key.pem
basic_auth_users:
  scraper: %s
`, hash)), 0o600); err != nil {
		t.Fatal(err)
	}
	port := outtest.FreeAddr(t)
	_, p, _ := net.SplitHostPort(port)
	all := "0.0.0.0:" + p

	// Without the file, a non-loopback address is refused before
	// anything is attached.
	stdout, stderr, status := outtest.Run(t, dtrace, "-x", "prometheus="+all, "-n", "BEGIN { trace(1); exit(0); }")
	if status == 0 || stdout != "" || !strings.Contains(stderr, "failed to set -x prometheus: 0.0.0.0 is not a loopback address") ||
		strings.Contains(stderr, "matched") {
		t.Errorf("0.0.0.0 without promwebconfig: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}

	cmd := exec.Command(dtrace, "-x", "prometheus="+all, "-x", "promwebconfig="+webconf,
		"-n", `BEGIN { printf("ready\n"); } syscall::getppid:entry /execname == "promtgt"/ { @calls = count(); }`)
	var out, errs lockedbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	start(t, cmd, syscall.SIGINT)
	if !poll(60*time.Second, func() bool { return strings.Contains(out.String(), "ready") }) {
		t.Fatalf("dtrace did not start: %s", errs.String())
	}
	if out, err := exec.Command(tgt, "5000").CombinedOutput(); err != nil {
		t.Fatalf("target: %v %s", err, out)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool}}, Timeout: 10 * time.Second}
	url := "https://127.0.0.1:" + p + "/metrics"
	if resp, err := client.Get(url); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without credentials: %v %v, want 401", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, err := http.Get("http://127.0.0.1:" + p + "/metrics"); err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("plain HTTP served")
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth("scraper", pass)
	var page string
	if !poll(30*time.Second, func() bool {
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		page = string(b)
		return strings.Contains(page, "\ndtrace_calls 5000\n")
	}) {
		t.Fatalf("no dtrace_calls 5000 over TLS with credentials:\n%s\nstderr: %s", page, errs.String())
	}

	prometheus, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus (Debian's prometheus package)")
	}
	web := outtest.FreeAddr(t)
	conf := filepath.Join(dir, "prometheus.yml")
	job := func(name, auth string) string {
		return fmt.Sprintf(`  - job_name: %s
    scheme: https
    tls_config:
      ca_file: %s
%s    static_configs:
      - targets: ["127.0.0.1:%s"]
`, name, certs.CA, auth, p)
	}
	if err := os.WriteFile(conf, []byte(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
`+job("dtrace", "    basic_auth:\n      username: scraper\n      password: "+pass+"\n")+job("noauth", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	pr := exec.Command(prometheus, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+web)
	var plog lockedbuf.Buffer
	pr.Stdout, pr.Stderr = &plog, &plog
	start(t, pr, syscall.SIGTERM)
	queryValue(t, web, `dtrace_calls{job="dtrace"}`, "5000", &plog)
	queryValue(t, web, `up{job="noauth"}`, "0", &plog)
	// Prometheus says why: the target answered 401. On a loaded machine
	// a scrape may first time out (its timeout is 1s), so the reason is
	// awaited over later scrapes.
	var targets string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		targets = get("http://" + web + "/api/v1/targets")
		if strings.Contains(targets, "401") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(targets, "401") {
		t.Errorf("the scrape without credentials did not fail with 401 within 60s:\n%s", targets)
	}
}
