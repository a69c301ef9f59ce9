package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// The protocols OTLP exporters speak (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtoHTTP = "http/protobuf"
	ProtoGRPC = "grpc"
)

// signal is what one endpoint receives.
type signal struct {
	name string // "traces", "metrics"
	path string // the HTTP path appended to a base endpoint
	// service and method name the gRPC call.
	grpc string
}

var (
	traces  = signal{"traces", "/v1/traces", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"}
	metrics = signal{"metrics", "/v1/metrics", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"}
)

// endpoint is where one signal goes and how, as the OpenTelemetry
// exporter specification has the configuration resolved: the signal's
// own variable (OTEL_EXPORTER_OTLP_TRACES_*) before the general one
// (OTEL_EXPORTER_OTLP_*), -x otlp= before both for the endpoint.
type endpoint struct {
	proto   string
	url     string // the full URL posted to (HTTP) or the server's (gRPC)
	headers map[string]string
	timeout time.Duration
	gzip    bool
	tls     *tls.Config // nil: plain text
}

// env reads an OTEL_EXPORTER_OTLP_ variable of the signal, else the
// general one.
func env(getenv func(string) string, sig signal, name string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_" + strings.ToUpper(sig.name) + "_" + name); v != "" {
		return v
	}
	return getenv("OTEL_EXPORTER_OTLP_" + name)
}

// CheckURL checks an -x otlp= value: an http or https URL with a host.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	}
	return nil
}

// CheckProtocol checks a protocol's name.
func CheckProtocol(p string) error {
	if p != ProtoHTTP && p != ProtoGRPC {
		return fmt.Errorf("unknown OTLP protocol %q (grpc or http/protobuf)", p)
	}
	return nil
}

// resolve works out a signal's endpoint from the -x otlp= URL (base,
// empty to take the environment's), the protocol asked for (empty:
// the environment's, else http/protobuf) and the environment.
func resolve(sig signal, base, proto string, getenv func(string) string) (*endpoint, error) {
	e := &endpoint{proto: proto, headers: map[string]string{}, timeout: 10 * time.Second}
	if e.proto == "" {
		e.proto = env(getenv, sig, "PROTOCOL")
	}
	if e.proto == "" {
		e.proto = ProtoHTTP
	}
	if err := CheckProtocol(e.proto); err != nil {
		return nil, err
	}
	own := getenv("OTEL_EXPORTER_OTLP_" + strings.ToUpper(sig.name) + "_ENDPOINT")
	switch {
	case base != "":
		e.url = joinPath(base, sig, e.proto)
	case own != "":
		// A signal's own endpoint is used as it is.
		e.url = own
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		e.url = joinPath(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), sig, e.proto)
	default:
		host := "http://localhost:4318"
		if e.proto == ProtoGRPC {
			host = "http://localhost:4317"
		}
		e.url = joinPath(host, sig, e.proto)
	}
	u, err := url.Parse(e.url)
	if err != nil {
		return nil, fmt.Errorf("OTLP %s endpoint: %v", sig.name, err)
	}
	if u.Scheme == "" || u.Host == "" {
		// gRPC endpoints may be host:port; insecure says how.
		u, err = url.Parse("https://" + e.url)
		if err != nil {
			return nil, fmt.Errorf("OTLP %s endpoint: %v", sig.name, err)
		}
		if b, _ := strconv.ParseBool(env(getenv, sig, "INSECURE")); b {
			u.Scheme = "http"
		}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("OTLP %s endpoint %q: not http or https", sig.name, e.url)
	}
	if e.proto == ProtoGRPC {
		u.Path = sig.grpc
	}
	e.url = u.String()
	if h := env(getenv, sig, "HEADERS"); h != "" {
		for _, kv := range strings.Split(h, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, _ = url.QueryUnescape(strings.TrimSpace(k))
			v, _ = url.QueryUnescape(strings.TrimSpace(v))
			if !ok || k == "" {
				return nil, fmt.Errorf("OTLP headers: bad entry %q", kv)
			}
			e.headers[k] = v
		}
	}
	if t := env(getenv, sig, "TIMEOUT"); t != "" {
		ms, err := strconv.Atoi(t)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTLP timeout %q: not a number of milliseconds", t)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := env(getenv, sig, "COMPRESSION"); c {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("OTLP compression %q: gzip or none", c)
	}
	if u.Scheme == "https" {
		if e.tls, err = tlsConfig(getenv, sig); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// joinPath is a base endpoint's URL for a signal: HTTP appends the
// signal's path to the base's; gRPC takes the host alone.
func joinPath(base string, sig signal, proto string) string {
	if proto == ProtoGRPC {
		return base
	}
	return strings.TrimSuffix(base, "/") + sig.path
}

// tlsConfig is the client's TLS: the CA to trust (CERTIFICATE, else the
// system's) and the client's certificate and key for mutual TLS.
func tlsConfig(getenv func(string) string, sig signal) (*tls.Config, error) {
	c := &tls.Config{}
	if ca := env(getenv, sig, "CERTIFICATE"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, err
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate", ca)
		}
	}
	cert, key := env(getenv, sig, "CLIENT_CERTIFICATE"), env(getenv, sig, "CLIENT_KEY")
	if (cert == "") != (key == "") {
		return nil, errors.New("OTLP client certificate and key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
