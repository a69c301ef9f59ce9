package otlp

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/internal/testutil/testcert"
	"github.com/dtrace-go/dtrace/program"
)

// seenRequest is what the test receiver saw of a request besides its
// body.
type seenRequest struct {
	header http.Header
	proto  string // HTTP/1.1, HTTP/2.0
	client string // the TLS client certificate's common name
}

// startTLSReceiver is startReceiver over TLS with the server
// certificate of files, asking for a client certificate signed by its
// CA (mutual TLS); HTTP/1.1 and HTTP/2 (ALPN "h2", as gRPC needs).
func startTLSReceiver(t *testing.T, files *testcert.Files) *receiver {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(files.ServerCert, files.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	return serveReceiver(t, &tls.Config{Certificates: []tls.Certificate{cert},
		ClientCAs: files.Pool, ClientAuth: tls.RequireAndVerifyClientCert})
}

// TestTLSHeaders exports over https, HTTP/protobuf and gRPC, to a
// receiver with a certificate of a CA of the test's own that asks for a
// client certificate: with OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_
// CERTIFICATE, _CLIENT_KEY and _HEADERS (percent-encoded values) the
// metrics arrive with the headers, by the protocol's HTTP version, from
// the client certificate; without the CA, or without the client
// certificate, nothing arrives and the record is counted as dropped,
// with the TLS error as the last one.
func TestTLSHeaders(t *testing.T) {
	files := testcert.Write(t, t.TempDir())
	for _, proto := range []string{ProtoHTTP, ProtoGRPC} {
		t.Run(proto, func(t *testing.T) {
			r := startTLSReceiver(t, files)
			env := map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":           "https://" + r.addr,
				"OTEL_EXPORTER_OTLP_PROTOCOL":           proto,
				"OTEL_EXPORTER_OTLP_CERTIFICATE":        files.CA,
				"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": files.ClientCert,
				"OTEL_EXPORTER_OTLP_CLIENT_KEY":         files.ClientKey,
				"OTEL_EXPORTER_OTLP_HEADERS":            "authorization=Bearer%20s3cret,X-Tenant=team%2Ca",
			}
			export := func() (int64, int64, string) {
				e, err := New(Config{Getenv: func(k string) string { return env[k] }})
				if err != nil {
					t.Fatal(err)
				}
				c := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
				c.Add(nil, []int64{42})
				return e.Close([]*aggregate.Agg{c}, nil, 10*time.Second)
			}
			if dropped, sent, lastErr := export(); dropped != 0 || sent != 1 {
				t.Fatalf("dropped %d sent %d: %s", dropped, sent, lastErr)
			}
			r.mu.Lock()
			if len(r.metrics) != 1 || r.metrics[0].ScopeMetrics[0].Metrics[0].GetSum().GetDataPoints()[0].GetAsInt() != 42 {
				t.Errorf("received %v", r.metrics)
			}
			if len(r.reqs) != 1 {
				t.Fatalf("%d requests", len(r.reqs))
			}
			q := r.reqs[0]
			r.mu.Unlock()
			if q.header.Get("Authorization") != "Bearer s3cret" || q.header.Get("X-Tenant") != "team,a" {
				t.Errorf("headers %v", q.header)
			}
			if q.client != "dtrace" {
				t.Errorf("client certificate %q, want dtrace's", q.client)
			}
			// Both protocols take HTTP/2 when TLS offers it (as the
			// OpenTelemetry SDK's HTTP exporter does).
			if q.proto != "HTTP/2.0" {
				t.Errorf("protocol %s, want HTTP/2.0", q.proto)
			}

			// Without the CA, the receiver's certificate is not trusted.
			delete(env, "OTEL_EXPORTER_OTLP_CERTIFICATE")
			if dropped, sent, lastErr := export(); dropped != 1 || sent != 0 || !strings.Contains(lastErr, "certificate signed by unknown authority") {
				t.Errorf("without the CA: dropped %d sent %d: %s", dropped, sent, lastErr)
			}
			// Without a client certificate, the receiver refuses the
			// handshake (in TLS 1.3 the client learns it at its first
			// write, so the error's words vary).
			env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = files.CA
			delete(env, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
			delete(env, "OTEL_EXPORTER_OTLP_CLIENT_KEY")
			if dropped, sent, lastErr := export(); dropped != 1 || sent != 0 || lastErr == "" {
				t.Errorf("without a client certificate: dropped %d sent %d: %s", dropped, sent, lastErr)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.reqs) != 1 {
				t.Errorf("%d requests arrived, want 1", len(r.reqs))
			}
		})
	}
}

// TestGRPCRefused: a gRPC receiver that refuses a call answers with its
// status in the headers and no body (Trailers-Only); the exporter
// counts the record as dropped and says the status by its name, with
// the message decoded.
func TestGRPCRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &p, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Grpc-Status", "16")
		w.Header().Set("Grpc-Message", "missing%20token")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	e, err := New(Config{URL: "http://" + ln.Addr().String(), Protocol: ProtoGRPC, Getenv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	c := aggregate.New(&aggregate.Desc{ID: 0, Name: "@calls", Func: program.AggCount})
	c.Add(nil, []int64{1})
	dropped, sent, lastErr := e.Close([]*aggregate.Agg{c}, nil, 10*time.Second)
	if dropped != 1 || sent != 0 || !strings.HasSuffix(lastErr, "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export: gRPC status 16 UNAUTHENTICATED: missing token") {
		t.Errorf("dropped %d sent %d: %q", dropped, sent, lastErr)
	}
}
