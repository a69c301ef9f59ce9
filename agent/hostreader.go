package agent

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// readDeadliner is a channel whose reads can be bounded.
type readDeadliner interface{ SetReadDeadline(time.Time) error }

// receive reads one message, within timeout when the channel allows.
func receive(c *Conn, rw io.ReadWriter, timeout time.Duration) (byte, []byte, error) {
	if d, ok := rw.(readDeadliner); ok {
		d.SetReadDeadline(time.Now().Add(timeout))
	}
	typ, body, err := c.Receive()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("no message from the host in %v", timeout)
	}
	return typ, body, err
}

// pong answers a ping at once.
func pong(c *Conn, body []byte) error {
	var p Ping
	if err := decode(MsgPing, body, &p); err != nil {
		return err
	}
	_, err := c.SendPing(MsgPong, Ping{Seq: p.Seq, Ping: p.Sent, Recv: c.Arrived()})
	return err
}

// hostReader is the agent's reader once the program came: it answers
// the host's pings, notes the pongs to the agent's own, and closes stop
// when the host asks to stop or goes away, and ended when the
// connection ends (the host closes it after its last clock samples, or
// it fails, or it is silent for HandshakeTimeout while the program is
// compiled, IdleTimeout once it traces).
type hostReader struct {
	c       *Conn
	stop    chan struct{}
	ended   chan struct{}
	once    sync.Once
	tracing atomic.Bool

	mu sync.Mutex
	// sent and recv are the last pong not yet reported: the host's
	// Sent, and when it arrived.
	sent, recv uint64
}

func newHostReader(c *Conn, rw io.ReadWriter) *hostReader {
	hr := &hostReader{c: c, stop: make(chan struct{}), ended: make(chan struct{})}
	go func() {
		defer close(hr.ended)
		defer hr.once.Do(func() { close(hr.stop) })
		for {
			timeout := HandshakeTimeout
			if hr.tracing.Load() {
				timeout = IdleTimeout
			}
			typ, body, err := receive(c, rw, timeout)
			if err != nil {
				return // the host went away: stop
			}
			switch typ {
			case MsgPing:
				if pong(c, body) != nil {
					return
				}
			case MsgPong:
				var p Ping
				if decode(typ, body, &p) != nil {
					return
				}
				hr.mu.Lock()
				hr.sent, hr.recv = p.Sent, c.Arrived()
				hr.mu.Unlock()
			case MsgStop:
				hr.once.Do(func() { close(hr.stop) })
			default:
				return // garbage: stop
			}
		}
	}()
	return hr
}

// pinger pings the host once tracing runs: every interval (eight times
// 5 ms apart first), each ping with the pong that came back since the
// last, until the function it returns is called: that stops it and
// waits until it has.
func (hr *hostReader) pinger(interval time.Duration) func() {
	hr.tracing.Store(true)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for seq := 0; ; seq++ {
			hr.mu.Lock()
			p := Ping{Seq: seq, PongSent: hr.sent, PongRecv: hr.recv}
			hr.sent, hr.recv = 0, 0
			hr.mu.Unlock()
			if _, err := hr.c.SendPing(MsgPing, p); err != nil {
				return
			}
			wait := interval
			if seq < 8 {
				wait = 5 * time.Millisecond
			}
			select {
			case <-quit:
				return
			case <-time.After(wait):
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}
