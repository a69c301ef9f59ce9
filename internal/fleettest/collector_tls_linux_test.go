package fleettest

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/testcert"
	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/output/otlp"
)

// received counts, in the Collector's file, the spans named span and
// gives the last value of the sum metric named metric (-1: none).
func received(t *testing.T, file, metric, span string) (spans int, value int64) {
	t.Helper()
	value = -1
	for _, doc := range fileDocs(t, file) {
		for _, m := range doc.metrics() {
			if m.Name == metric && m.Sum != nil && len(m.Sum.DataPoints) > 0 {
				fmt.Sscan(m.Sum.DataPoints[0].AsInt, &value)
			}
		}
		for _, name := range doc.spans() {
			if name == span {
				spans++
			}
		}
	}
	return spans, value
}

// TestCollectorTLS exports spans and metrics with -x otlp alone, the
// endpoint and everything else from the OTEL_EXPORTER_OTLP_ variables,
// over HTTP/protobuf and over gRPC, to a Collector whose OTLP receiver
// speaks TLS only (a certificate of the test's own CA), asks for a
// client certificate of that CA (mutual TLS), and lets in only requests
// whose Authorization header carries its bearer token (the empty clause
// makes the records that become spans): with
// OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY and
// _HEADERS=authorization=Bearer%20<token>, the Collector's file holds
// the 100 getppid spans and the count 200; with another token, it holds
// nothing, and dtrace says how many records it dropped and that the
// Collector refused them (401 over HTTP, gRPC status 16,
// UNAUTHENTICATED).
func TestCollectorTLS(t *testing.T) {
	dir, dtrace := build(t)
	target := testprog.BuildCalls(t, dir, "-O1")
	files := testcert.Write(t, dir)
	for _, proto := range []string{otlp.ProtoHTTP, otlp.ProtoGRPC} {
		t.Run(proto, func(t *testing.T) {
			sub := t.TempDir()
			_, httpAddr, grpcAddr, out := collectorWith(t, sub, fmt.Sprintf(`tls:
  cert_file: %s
  key_file: %s
  client_ca_file: %s
auth:
  authenticator: bearertokenauth
`, files.ServerCert, files.ServerKey, files.CA), "bearertokenauth:\n  token: s3cret\n")
			addr := httpAddr
			if proto == otlp.ProtoGRPC {
				addr = grpcAddr
			}
			run := func(token string) string {
				cmd := exec.Command(dtrace, "-q", "-x", "otlp", "-x", "otlpspans=syscall::getppid:",
					"-n", `syscall::getppid:entry,syscall::getppid:return /pid == $target/ { @n = count(); }
syscall::getppid:entry,syscall::getppid:return /pid == $target/ { }`,
					"-c", target+" 100")
				cmd.Env = append(os.Environ(),
					"OTEL_EXPORTER_OTLP_ENDPOINT=https://"+addr,
					"OTEL_EXPORTER_OTLP_PROTOCOL="+proto,
					"OTEL_EXPORTER_OTLP_CERTIFICATE="+files.CA,
					"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE="+files.ClientCert,
					"OTEL_EXPORTER_OTLP_CLIENT_KEY="+files.ClientKey,
					"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20"+token)
				b, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("dtrace: %v\n%s", err, b)
				}
				return string(b)
			}

			// Another token: refused, counted, said.
			b := run("wrong")
			m := regexp.MustCompile(`dtrace: (\d+) OTLP records dropped \((.*)\)`).FindStringSubmatch(b)
			want := map[string]string{otlp.ProtoHTTP: "401 Unauthorized", otlp.ProtoGRPC: "gRPC status 16 UNAUTHENTICATED"}[proto]
			if m == nil || m[1] != "101" || !strings.Contains(m[2], want) {
				// 100 spans and one data point.
				t.Errorf("with a wrong token, dtrace says %q, want 101 records dropped (... %s ...)", b, want)
			}
			time.Sleep(500 * time.Millisecond) // the file exporter's flush interval, and then some
			if spans, n := received(t, out, "dtrace.n", "getppid"); spans != 0 || n != -1 {
				t.Errorf("with a wrong token, the Collector received %d spans and the count %d", spans, n)
			}

			// The token: everything arrives.
			if b := run("s3cret"); strings.Contains(b, "OTLP") {
				t.Errorf("dtrace: %s", b)
			}
			var spans int
			var n int64
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				if spans, n = received(t, out, "dtrace.n", "getppid"); spans == 100 && n == 200 {
					break
				}
			}
			if spans != 100 || n != 200 {
				t.Errorf("the Collector received %d getppid spans and the count %d, want 100 and 200", spans, n)
			}
		})
	}
}
