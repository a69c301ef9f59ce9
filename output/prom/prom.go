// Package prom serves a program's aggregations as Prometheus metrics on
// /metrics while dtrace runs. Each aggregation @NAME is the metric family
// dtrace_NAME (dtrace_agg for @); its keys are labels key0, key1, ... or
// the names given; count, sum, min, max, avg and stddev are gauges (clear()
// and trunc() can lower them, which a counter may not do); quantize,
// lquantize and llquantize are histograms with a bucket per non-empty
// bucket of the aggregation (upper bounds inclusive, as "le" is), their
// sum estimated from the buckets' lower bounds since the kernel keeps
// only counts; quantize is a native histogram too (newNative). Pages are
// in the text format, or in the protobuf one for a scraper that asks for
// it (Prometheus does to read native histograms): expfmt.go.
//
// Values are read from the kernel at scrape time, by the goroutine that
// consumes the buffers: a scrape asks (Server.Serve answers between
// passes over the buffers), so that reading never races the consumer.
//
// Without a web configuration file only loopback addresses are served,
// in plain HTTP. With one (-x promwebconfig=FILE, the file every
// Prometheus exporter takes: prometheus/exporter-toolkit's TLS server
// settings, client CA, basic-auth users with bcrypt hashes) any address
// is, with what the file configures; it must configure TLS or basic
// authentication, so that a fleet's scrape target is never open by
// mistake. The file is read again for every connection, as the toolkit
// does, so renewed certificates and changed users apply without a
// restart.
package prom

import (
	"compress/gzip"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
)

// CheckAddr checks that addr is host:port and that it can be listened
// on now. Whether it may be served is Exposure's question.
func CheckAddr(addr string) error {
	ln, err := listen(addr)
	if err != nil {
		return err
	}
	return ln.Close()
}

// Loopback reports whether addr's host is a loopback address or
// localhost.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// Exposure checks that addr may be served with the web configuration
// file webConfig ("" for none): a loopback address always, any other
// only with a file.
func Exposure(addr, webConfig string) error {
	if webConfig == "" && !Loopback(addr) {
		host, _, _ := net.SplitHostPort(addr)
		if host == "" {
			host = "every address"
		}
		return fmt.Errorf("%s is not a loopback address: serving it needs -x promwebconfig=FILE (TLS or basic authentication)", host)
	}
	return nil
}

// CheckWebConfig checks a web configuration file (its YAML, certificate,
// key, client CA, bcrypt hashes) and that it configures TLS or basic
// authentication.
func CheckWebConfig(file string) error {
	if file == "" {
		return errors.New("no file named")
	}
	c, err := readWebConfig(file)
	if err != nil {
		return err
	}
	if !c.tlsOn() && len(c.Users) == 0 {
		return fmt.Errorf("%s configures neither tls_server_config nor basic_auth_users", file)
	}
	return nil
}

// Listen listens on addr, a loopback host:port.
func Listen(addr string) (net.Listener, error) {
	if err := Exposure(addr, ""); err != nil {
		return nil, err
	}
	return listen(addr)
}

// listen listens on addr, a host:port.
func listen(addr string) (net.Listener, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// CheckLabels checks names given for the keys' labels.
func CheckLabels(s string) error {
	for _, n := range strings.Split(s, ",") {
		if !validName(n) || strings.HasPrefix(n, "__") {
			return fmt.Errorf("bad label name %q", n)
		}
	}
	return nil
}

func validName(n string) bool {
	if n == "" {
		return false
	}
	for i, c := range n {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Reader reads every aggregation from the kernel.
type Reader func() ([]*aggregate.Agg, error)

// Server serves /metrics.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	labels []string
	sym    format.Symbolizer
	reqs   chan chan []family
	done   chan struct{}
}

// Config says where and how a Server serves.
type Config struct {
	// Addr is the host:port listened on.
	Addr string
	// WebConfig is the web configuration file (TLS, basic auth), ""
	// for none: then Addr must be a loopback address.
	WebConfig string
	// Labels name the keys' labels (empty: key0, key1, ...).
	Labels []string
	// Sym resolves stack keys.
	Sym format.Symbolizer
}

// Start listens on addr, a loopback address, and serves /metrics in
// plain HTTP; labels name the keys' labels (empty: key0, key1, ...), sym
// resolves stack keys.
func Start(addr string, labels []string, sym format.Symbolizer) (*Server, error) {
	return StartConfig(Config{Addr: addr, Labels: labels, Sym: sym})
}

// StartConfig listens and serves /metrics as c says.
func StartConfig(c Config) (*Server, error) {
	if err := Exposure(c.Addr, c.WebConfig); err != nil {
		return nil, err
	}
	if c.WebConfig != "" {
		if err := CheckWebConfig(c.WebConfig); err != nil {
			return nil, err
		}
	}
	ln, err := listen(c.Addr)
	if err != nil {
		return nil, err
	}
	labels, sym := c.Labels, c.Sym
	s := &Server{ln: ln, labels: labels, sym: sym, reqs: make(chan chan []family), done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.metrics)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if c.WebConfig == "" {
		go s.srv.Serve(ln)
		return s, nil
	}
	auth := &authHandler{file: c.WebConfig, h: mux}
	wc := auth.config()
	if wc == nil {
		ln.Close()
		return nil, fmt.Errorf("%s: cannot be read", c.WebConfig)
	}
	s.srv.Handler = auth
	if !wc.tlsOn() {
		go s.srv.Serve(ln)
		return s, nil
	}
	tc, err := wc.tlsConfig()
	if err != nil {
		ln.Close()
		return nil, err
	}
	if wc.HTTP.HTTP2 != nil && !*wc.HTTP.HTTP2 {
		s.srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
	}
	s.srv.TLSConfig = tc
	go s.srv.ServeTLS(ln, "", "")
	return s, nil
}

// Addr is the address served.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers the scrapes waiting, reading the aggregations with read.
// The consumer's goroutine calls it between passes over the buffers.
func (s *Server) Serve(read Reader) error {
	for {
		select {
		case reply := <-s.reqs:
			aggs, err := read()
			if err != nil {
				close(reply)
				return err
			}
			reply <- s.families(aggs)
		default:
			return nil
		}
	}
}

// Close stops serving; scrapes then find no aggregations.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	close(s.done)
	return s.srv.Close()
}

// ErrClosed is returned by Serve's reader once tracing is over.
var ErrClosed = errors.New("prometheus endpoint closed")

// scrapeWait bounds how long a scrape waits for the consumer.
const scrapeWait = 5 * time.Second

// scrape asks the consumer for the metrics: none once tracing is over or
// when it does not answer in time.
func (s *Server) scrape() []family {
	reply := make(chan []family, 1)
	select {
	case s.reqs <- reply:
	case <-s.done:
		return nil
	case <-time.After(scrapeWait):
		return nil
	}
	select {
	case fams := <-reply:
		return fams
	case <-time.After(scrapeWait):
		return nil
	}
}

// metrics serves /metrics in the format the Accept header prefers,
// gzip-compressed when Accept-Encoding prefers that; name[] parameters
// select families by name.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	fams, err := gather(s.scrape())
	if err != nil {
		http.Error(w, "An error has occurred while serving metrics:\n\n"+err.Error(), http.StatusInternalServerError)
		return
	}
	if names := r.URL.Query()["name[]"]; len(names) > 0 {
		fams = slices.DeleteFunc(fams, func(f family) bool { return !slices.Contains(names, f.name) })
	}
	proto, ctype := negotiate(r.Header.Get("Accept"))
	var body []byte
	if proto {
		body = writeProto(nil, fams)
	} else {
		var b strings.Builder
		writeText(&b, fams)
		body = []byte(b.String())
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Type", ctype)
	if !gzipWanted(r.Header.Values("Accept-Encoding")) {
		w.Write(body)
		return
	}
	h.Set("Content-Encoding", "gzip")
	gz := gzip.NewWriter(w)
	gz.Write(body)
	gz.Close()
}
