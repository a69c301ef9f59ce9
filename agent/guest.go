package agent

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Handler receives what a guest sends while it traces. Its methods are
// called from the guest's own goroutine.
type Handler interface {
	// Record is one record; its Time is already on the host's clock.
	Record(g *Guest, r *Record)
	// Message is a fault, error or drop in dtrace's words.
	Message(g *Guest, text string)
}

// Guest is the host's connection to the agent in one guest.
type Guest struct {
	// Name is the machine's name as -x guest gives it.
	Name string
	// Clock maps the guest's times onto the host's.
	Clock Clock

	nc   net.Conn
	c    *Conn
	now  func() uint64
	aggs []Agg
	// status and err are the guest's exit status and what ended its
	// connection badly; set before done closes.
	status int
	err    error
	done   chan struct{}
	quit   chan struct{}
	once   sync.Once
}

// HandshakeTimeout bounds the wait for a guest's agent to answer: a
// guest that boots under emulation takes seconds.
var HandshakeTimeout = 5 * time.Minute

// Dial connects to the agent of guest name over addr, the UNIX socket
// QEMU listens on for the guest's virtio-serial port, and checks that it
// speaks this protocol. now reads the host's CLOCK_MONOTONIC.
func Dial(name, addr string, now func() uint64) (*Guest, error) {
	if strings.HasPrefix(addr, "vsock:") {
		return nil, fmt.Errorf("guest %s: vsock is not supported yet; use a virtio-serial port's socket", name)
	}
	nc, err := net.Dial("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("guest %s: %v", name, err)
	}
	g := &Guest{Name: name, nc: nc, c: NewConn(nc), now: now, done: make(chan struct{}), quit: make(chan struct{})}
	nc.SetDeadline(time.Now().Add(HandshakeTimeout))
	if err := g.c.Send(MsgHello, Hello{Magic: magic, Version: Version, Machine: "host"}); err != nil {
		nc.Close()
		return nil, fmt.Errorf("guest %s: %v", name, err)
	}
	typ, body, err := g.c.Receive()
	if err == nil {
		_, err = checkHello(typ, body, "its agent")
	}
	if err == nil {
		err = g.calibrate(8)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("guest %s: %v", name, err)
	}
	return g, nil
}

// calibrate takes n clock samples before tracing, so that the first
// records are mapped well.
func (g *Guest) calibrate(n int) error {
	for i := 0; i < n; i++ {
		if err := g.c.Send(MsgPing, Ping{Seq: -1 - i, Host: g.now()}); err != nil {
			return err
		}
		typ, body, err := g.c.Receive()
		if err != nil {
			return err
		}
		var p Ping
		if err := expect(typ, MsgPong, "a pong", body, &p); err != nil {
			return err
		}
		g.Clock.Sample(p.Host, p.Guest, g.now())
	}
	return nil
}

// Start sends the program and waits until the guest traces; it returns
// how many probes the program matched there.
func (g *Guest) Start(p Program) (int, error) {
	if err := g.c.Send(MsgProgram, p); err != nil {
		return 0, g.fail(err)
	}
	typ, body, err := g.c.Receive()
	if err != nil {
		return 0, g.fail(err)
	}
	switch typ {
	case MsgStarted:
		var s Started
		if err := decode(typ, body, &s); err != nil {
			return 0, g.fail(err)
		}
		g.nc.SetDeadline(time.Time{})
		return s.Matched, nil
	case MsgError:
		var m Message
		decode(typ, body, &m)
		return 0, g.fail(errors.New(m.Text))
	}
	return 0, g.fail(fmt.Errorf("%w: message %q where Started was expected", ErrGarbage, typ))
}

func (g *Guest) fail(err error) error {
	g.nc.Close()
	return fmt.Errorf("guest %s: %v", g.Name, err)
}

// Run receives what the guest sends until it is done, handing records
// and messages to h, and pings it every interval to keep its clock
// mapped. Call it in a goroutine; Wait returns when it ends.
func (g *Guest) Run(h Handler, interval time.Duration) {
	go g.ping(interval)
	defer close(g.done)
	defer g.once.Do(func() { close(g.quit) })
	for {
		typ, body, err := g.c.Receive()
		if err != nil {
			g.err = err
			return
		}
		switch typ {
		case MsgRecord:
			var r Record
			if !g.take(typ, body, &r) {
				return
			}
			r.Time = g.Clock.ToHost(r.Time)
			h.Record(g, &r)
		case MsgMessage:
			var m Message
			if !g.take(typ, body, &m) {
				return
			}
			h.Message(g, m.Text)
		case MsgPong:
			var p Ping
			if !g.take(typ, body, &p) {
				return
			}
			g.Clock.Sample(p.Host, p.Guest, g.now())
		case MsgAggs:
			var a Aggs
			if !g.take(typ, body, &a) {
				return
			}
			g.aggs = a.Aggs
		case MsgError:
			var m Message
			decode(typ, body, &m)
			g.err = errors.New(m.Text)
			return
		case MsgDone:
			var d Done
			if g.take(typ, body, &d) {
				g.status = d.Status
			}
			return
		default:
			g.err = fmt.Errorf("%w: unknown message %q", ErrGarbage, typ)
			return
		}
	}
}

// take decodes a message's body into v; a body that does not decode
// ends the connection (g.err).
func (g *Guest) take(typ byte, body []byte, v any) bool {
	if err := decode(typ, body, v); err != nil {
		g.err = err
		return false
	}
	return true
}

// ping sends a clock sample request every interval (a burst of eight
// first, for a good first estimate) until Run ends.
func (g *Guest) ping(interval time.Duration) {
	for seq := 0; ; seq++ {
		if err := g.c.Send(MsgPing, Ping{Seq: seq, Host: g.now()}); err != nil {
			return
		}
		wait := interval
		if seq < 8 {
			wait = 5 * time.Millisecond
		}
		select {
		case <-g.quit:
			return
		case <-time.After(wait):
		}
	}
}

// Stop asks the guest to stop tracing and waits (up to timeout) for its
// aggregations and exit status; it closes the connection, which makes
// the agent detach everything if it has not yet.
func (g *Guest) Stop(timeout time.Duration) ([]Agg, int, error) {
	g.c.Send(MsgStop, nil)
	select {
	case <-g.done:
	case <-time.After(timeout):
		g.nc.Close()
		<-g.done
		return g.aggs, 1, fmt.Errorf("guest %s: no answer to stop within %v", g.Name, timeout)
	}
	g.nc.Close()
	if g.err != nil {
		return g.aggs, 1, fmt.Errorf("guest %s: %v", g.Name, g.err)
	}
	return g.aggs, g.status, nil
}

// Done is closed once the guest ended its side (its program exited, or
// it failed).
func (g *Guest) Done() <-chan struct{} { return g.done }

// Clock maps a guest's CLOCK_MONOTONIC onto the host's from ping-pong
// samples: of the recent samples, the one with the shortest round trip
// gives the offset (the guest's time taken halfway through it), and half
// that round trip bounds the error. The best samples of successive
// windows give the drift: the rate at which the offset changes.
type Clock struct {
	mu      sync.Mutex
	samples []clockSample // the most recent, at most keepSamples
	best    clockSample   // the best of samples
	anchor  *clockSample  // the best of an earlier window, for the rate
	rate    float64       // offset change per host nanosecond
	n       int
}

type clockSample struct {
	rtt    uint64
	offset int64
	at     uint64 // host time halfway through the round trip
}

// keepSamples is how many recent samples the estimate is taken from, so
// that it follows drift.
const keepSamples = 32

// minRateSpan is how far apart in host time two best samples must be for
// the rate between them to mean more than their noise.
const minRateSpan = 2e9

// Sample adds one ping-pong: the host's times when the ping left (sent)
// and the pong came back (recv), and the guest's when it answered.
func (c *Clock) Sample(sent, guest, recv uint64) {
	if recv < sent {
		return
	}
	rtt := recv - sent
	s := clockSample{rtt: rtt, offset: int64(guest) - int64(sent+rtt/2), at: sent + rtt/2}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.samples = append(c.samples, s)
	if len(c.samples) > keepSamples {
		c.samples = c.samples[1:]
	}
	if c.n%keepSamples == 0 {
		// A window is complete: its best anchors the rate once the
		// next window's best is far enough away.
		if c.anchor == nil || c.best.at-c.anchor.at >= minRateSpan {
			a := c.best
			c.anchor = &a
		}
	}
	best := c.samples[0]
	for _, x := range c.samples[1:] {
		if x.rtt < best.rtt {
			best = x
		}
	}
	c.best = best
	if a := c.anchor; a != nil && best.at > a.at+minRateSpan {
		c.rate = float64(best.offset-a.offset) / float64(best.at-a.at)
	}
}

// ToHost maps a guest time onto the host's clock: the offset of the best
// recent sample, moved by the rate to the time mapped.
func (c *Clock) ToHost(guest uint64) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := int64(guest) - c.best.offset
	return uint64(h - int64(c.rate*float64(h-int64(c.best.at))))
}

// Rate is the drift: how many nanoseconds the guest's clock gains on
// the host's per host second.
func (c *Clock) Rate() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate * 1e9
}

// Estimate returns the offset (guest minus host, nanoseconds), its error
// bound and how many samples were taken.
func (c *Clock) Estimate() (offset int64, bound uint64, samples int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.best.offset, c.best.rtt / 2, c.n
}
