package agent

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	// Hold, when not zero, keeps each record this long (host time)
	// before its time is mapped and it is handed over, so that the
	// clock samples after it shape its mapping too; what is held when
	// the guest ends is mapped by the whole run's samples. At most
	// maxHeld records are held.
	Hold time.Duration

	nc   stream
	c    *Conn
	now  func() uint64
	aggs []Agg
	held []held
	// status and err are the guest's exit status and what ended its
	// connection badly; set before done closes.
	status int
	err    error
	done   chan struct{}
	quit   chan struct{}
	once   sync.Once
	// pinged is closed once the pinger ended.
	pinged chan struct{}
}

// stream is a connection to an agent: a UNIX socket (net.Conn) or a
// vsock socket (*os.File).
type stream interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
}

// held is a record held, with the host time it arrived.
type held struct {
	r  Record
	at uint64
}

const (
	// calibration is how many pings calibrate the clocks, at the start
	// and at the end; calibrateTimeout bounds the last ones.
	calibration      = 64
	calibrateTimeout = 10 * time.Second
)

// pingInterval is how often each side pings the other while tracing.
const pingInterval = 100 * time.Millisecond

// maxHeld bounds the records a guest holds (Guest.Hold).
const maxHeld = 1 << 16

var (
	// HandshakeTimeout bounds the wait for a guest's agent to answer:
	// a guest that boots under emulation takes seconds.
	HandshakeTimeout = 5 * time.Minute
	// IdleTimeout bounds the silence of a connection while it traces:
	// both sides ping every 200 ms, so a longer silence means the peer
	// is gone.
	IdleTimeout = time.Minute
)

// Dial connects to the agent of guest name over addr, the UNIX socket
// QEMU listens on for the guest's virtio-serial port or vsock:CID:PORT,
// and checks that it speaks this protocol. now reads the host's
// CLOCK_MONOTONIC.
func Dial(name, addr string, now func() uint64) (*Guest, error) {
	var nc stream
	var err error
	if rest, ok := strings.CutPrefix(addr, "vsock:"); ok {
		nc, err = dialVsock(rest)
	} else {
		nc, err = net.Dial("unix", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("guest %s: %v", name, err)
	}
	g := &Guest{Name: name, nc: nc, c: newConn(nc, now), now: now, done: make(chan struct{}), quit: make(chan struct{}),
		pinged: make(chan struct{})}
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
		err = g.calibrate(calibration)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("guest %s: %v", name, err)
	}
	return g, nil
}

// calibrate takes n clock samples in a row: before tracing, so that
// the first records are mapped well, and after, while the guest is idle,
// so that the drift is fitted by good samples at both ends of the run.
func (g *Guest) calibrate(n int) error {
	for i := 0; i < n; i++ {
		if _, err := g.c.SendPing(MsgPing, Ping{Seq: -1 - i}); err != nil {
			return err
		}
		for {
			typ, body, err := g.c.Receive()
			if err != nil {
				return err
			}
			var p Ping
			if typ == MsgPing { // the agent's, still on its way
				if err := decode(typ, body, &p); err != nil {
					return err
				}
				if err := g.ping(&p); err != nil {
					return err
				}
				continue
			}
			if err := expect(typ, MsgPong, "a pong", body, &p); err != nil {
				return err
			}
			g.pong(&p)
			break
		}
	}
	return nil
}

// pong takes the samples of a pong to one of the host's pings: the ping
// one way, the pong the other.
func (g *Guest) pong(p *Ping) {
	g.Clock.Up(p.Ping, p.Recv)
	g.Clock.Down(p.Sent, g.c.Arrived())
}

// ping takes the samples of a ping of the agent's (it, and the pong it
// reports) and answers it.
func (g *Guest) ping(p *Ping) error {
	at := g.c.Arrived()
	g.Clock.Down(p.Sent, at)
	g.Clock.Up(p.PongSent, p.PongRecv)
	_, err := g.c.SendPing(MsgPong, Ping{Seq: p.Seq, Ping: p.Sent, Recv: at})
	return err
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
// mapped (it answers the guest's pings as they come). Call it in a
// goroutine; Wait returns when it ends.
func (g *Guest) Run(h Handler, interval time.Duration) {
	go g.pinger(interval)
	defer func() { <-g.pinged }()
	defer close(g.done)
	defer g.once.Do(func() { close(g.quit) })
	defer g.release(h, true)
	for {
		g.nc.SetReadDeadline(time.Now().Add(IdleTimeout))
		typ, body, err := g.c.Receive()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no message from its agent in %v", IdleTimeout)
		}
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
			if g.Hold == 0 {
				r.Time = g.Clock.ToHost(r.Time)
				h.Record(g, &r)
				break
			}
			g.held = append(g.held, held{r, g.c.Arrived()})
			g.release(h, false)
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
			g.pong(&p)
		case MsgPing:
			var p Ping
			if !g.take(typ, body, &p) {
				return
			}
			if err := g.ping(&p); err != nil {
				g.err = err
				return
			}
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
				// The last samples; no ping of the pinger's may come
				// after them, the agent would answer a closed channel.
				g.once.Do(func() { close(g.quit) })
				<-g.pinged
				g.nc.SetReadDeadline(time.Now().Add(calibrateTimeout))
				g.calibrate(calibration) // the agent waits for it
			}
			return
		default:
			g.err = fmt.Errorf("%w: unknown message %q", ErrGarbage, typ)
			return
		}
	}
}

// release maps and hands over the held records that arrived Hold ago
// or more, or beyond maxHeld (all of them when all is set), in order.
func (g *Guest) release(h Handler, all bool) {
	n := len(g.held)
	if !all {
		now := g.now()
		n = max(n-maxHeld, 0)
		for n < len(g.held) && now-g.held[n].at >= uint64(g.Hold) {
			n++
		}
	}
	for i := range g.held[:n] {
		r := &g.held[i].r
		r.Time = g.Clock.ToHost(r.Time)
		h.Record(g, r)
	}
	g.held = append(g.held[:0], g.held[n:]...)
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

// pinger sends a ping every interval (a burst of eight first, for a
// good first estimate) until Run ends.
func (g *Guest) pinger(interval time.Duration) {
	defer close(g.pinged)
	for seq := 0; ; seq++ {
		if _, err := g.c.SendPing(MsgPing, Ping{Seq: seq}); err != nil {
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
