package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The transport: the request messages are the OTLP collector services'
// (ExportTraceServiceRequest, ExportMetricsServiceRequest), each a list
// of resource entries under field 1, which Exporter writes in the wire
// format itself (wire.go): the OTLP Go module's types, and the protobuf
// runtime they need, would cost the binary megabytes and every start-up
// their packages' initialisation. HTTP/protobuf posts the request; gRPC
// frames it as a unary call over HTTP/2 (net/http: TLS with ALPN "h2"
// for https, HTTP/2 without TLS, "prior knowledge", for http).

// batch is one request waiting to be sent, and how many records
// (spans, span events, metric data points) it holds.
type batch struct {
	ep      *endpoint
	body    []byte
	records int
}

// sender sends batches from a queue of its own: the consumer only
// queues, and a batch that finds the queue full is dropped and counted,
// so a Collector that is down or slow never holds tracing up.
type sender struct {
	queue   chan batch
	client  *http.Client
	h2c     *http.Client
	dropped atomic.Int64
	sent    atomic.Int64
	lastErr atomic.Value // string
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  func()
}

// queueLen is how many batches may wait: with one batch per pass (or per
// export interval for metrics), seconds of a Collector's slowness.
const queueLen = 64

func newSender() *sender {
	s := &sender{queue: make(chan batch, queueLen)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.client = &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 2}}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	s.h2c = &http.Client{Transport: &http.Transport{Protocols: &p}}
	s.wg.Add(1)
	go s.run()
	return s
}

// send queues a batch; a full queue drops it.
func (s *sender) send(b batch) {
	select {
	case s.queue <- b:
	default:
		s.dropped.Add(int64(b.records))
	}
}

func (s *sender) run() {
	defer s.wg.Done()
	for b := range s.queue {
		if s.ctx.Err() != nil {
			s.dropped.Add(int64(b.records))
			continue
		}
		if err := s.post(b); err != nil {
			s.dropped.Add(int64(b.records))
			s.lastErr.Store(err.Error())
			continue
		}
		s.sent.Add(int64(b.records))
	}
}

// close sends what is queued, waiting at most wait, and drops (and
// counts) what is left then.
func (s *sender) close(wait time.Duration) {
	close(s.queue)
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
		s.cancel()
		<-done
	}
	s.cancel()
}

// post sends one batch.
func (s *sender) post(b batch) error {
	ctx, cancel := context.WithTimeout(s.ctx, b.ep.timeout)
	defer cancel()
	body := b.body
	if b.ep.gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(body)
		w.Close()
		body = z.Bytes()
	}
	client := s.client
	if b.ep.proto == ProtoGRPC {
		// The length-prefixed message: compressed flag, length, bytes.
		frame := make([]byte, 5, 5+len(body))
		if b.ep.gzip {
			frame[0] = 1
		}
		binary.BigEndian.PutUint32(frame[1:], uint32(len(body)))
		body = append(frame, body...)
		if strings.HasPrefix(b.ep.url, "http:") {
			client = s.h2c
		}
	}
	if b.ep.tls != nil {
		client = s.clientFor(b.ep)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", b.ep.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range b.ep.headers {
		req.Header.Set(k, v)
	}
	if b.ep.proto == ProtoGRPC {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Te", "trailers")
		req.Header.Set("Grpc-Timeout", fmt.Sprintf("%dm", b.ep.timeout.Milliseconds()))
		if b.ep.gzip {
			req.Header.Set("Grpc-Encoding", "gzip")
		}
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		if b.ep.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", b.ep.url, resp.Status)
	}
	if b.ep.proto == ProtoGRPC {
		// The status is in the trailers, or, in a response that has
		// no body (Trailers-Only, as servers refuse a call), in the
		// headers.
		h := resp.Trailer
		if h.Get("Grpc-Status") == "" {
			h = resp.Header
		}
		if st := h.Get("Grpc-Status"); st != "0" {
			return grpcError(b.ep.url, st, h.Get("Grpc-Message"))
		}
	}
	return nil
}

// grpcCodes names gRPC's status codes.
var grpcCodes = []string{"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"}

// grpcError says what a gRPC status means: its code, named, and the
// server's message (percent-encoded on the wire).
func grpcError(url, status, msg string) error {
	if status == "" {
		return fmt.Errorf("%s: no gRPC status in the response", url)
	}
	s := "gRPC status " + status
	if n, err := strconv.Atoi(status); err == nil && n >= 0 && n < len(grpcCodes) {
		s += " " + grpcCodes[n]
	}
	if m, err := neturl.PathUnescape(msg); err == nil && m != "" {
		s += ": " + m
	} else if msg != "" {
		s += ": " + msg
	}
	return fmt.Errorf("%s: %s", url, s)
}

// tlsClients holds a client per TLS configuration.
var tlsClients sync.Map // *endpoint → *http.Client

// clientFor is the client of an endpoint with TLS of its own.
func (s *sender) clientFor(ep *endpoint) *http.Client {
	if c, ok := tlsClients.Load(ep); ok {
		return c.(*http.Client)
	}
	t := &http.Transport{TLSClientConfig: ep.tls.Clone(), ForceAttemptHTTP2: true}
	c := &http.Client{Transport: t}
	tlsClients.Store(ep, c)
	return c
}
