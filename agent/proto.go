// Package agent is dtrace across machines: a dtrace agent in a guest
// (`dtrace -x agent=DEVICE`) serves a host dtrace (`-x guest=NAME=SOCKET`)
// over a byte channel, a virtio-serial port. The host sends the D program
// and its options; the agent compiles them for its own kernel, runs them,
// and streams back each record (its text as dtrace(1M) prints it and its
// actions typed as in output/json, stamped with the guest's
// CLOCK_MONOTONIC time, pid and tid), faults, errors and drops, and at the
// end its aggregations. docs/AGENT.md describes the protocol.
package agent

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/dtrace-go/dtrace/output"
)

// Version is the protocol version this dtrace speaks. Both sides send it
// first; a connection whose peer speaks another is closed with a message
// that says so.
const Version = 2

// magic opens every hello: a peer that is not a dtrace agent is told
// apart from one of another version.
const magic = "dtrace-go-agent"

// MaxFrame bounds a message's size: a length beyond it is garbage.
const MaxFrame = 16 << 20

// Message types: one byte before each message's JSON body.
const (
	// MsgHello opens the conversation, both ways: Hello.
	MsgHello byte = 'H'
	// MsgProgram, host to agent: Program.
	MsgProgram byte = 'P'
	// MsgStarted, agent to host: Started, tracing runs.
	MsgStarted byte = 'S'
	// MsgRecord, agent to host: Record.
	MsgRecord byte = 'R'
	// MsgMessage, agent to host: Message (a fault, error or drop in
	// dtrace's words).
	MsgMessage byte = 'M'
	// MsgPing and MsgPong, both ways: Ping, the clock samples. Either
	// side pings; the other answers at once.
	MsgPing byte = 'p'
	MsgPong byte = 'q'
	// MsgStop, host to agent: stop tracing (no body).
	MsgStop byte = 'T'
	// MsgAggs, agent to host: Aggs, the final aggregations.
	MsgAggs byte = 'A'
	// MsgDone, agent to host: Done, the last message.
	MsgDone byte = 'D'
	// MsgError, agent to host: Message, the program could not run.
	MsgError byte = 'E'
)

// Hello is the first message of each side.
type Hello struct {
	Magic   string `json:"magic"`
	Version int    `json:"version"`
	// Machine is the sender's host name.
	Machine string `json:"machine"`
}

// Source is one program of the host's command line (-n, -P, -m, -f,
// -i, or a -s script's text).
type Source struct {
	Name      string   `json:"name"`
	Text      string   `json:"text"`
	Kind      int      `json:"kind"` // dtrace.SpecKind
	Script    bool     `json:"script,omitempty"`
	MacroArgs []string `json:"macro_args,omitempty"`
}

// Program is what the host asks the agent to run.
type Program struct {
	Sources []Source `json:"sources"`
	// Options are the host's options as NAME=VALUE (or NAME), as -x
	// takes them.
	Options []string `json:"options,omitempty"`
}

// Started answers Program once tracing runs.
type Started struct {
	// Matched counts the probes the programs matched in the guest.
	Matched int `json:"matched"`
}

// Ping carries the clock samples, CLOCK_MONOTONIC nanoseconds of the
// side that took each: Sent is the sender's clock read right before the
// message was written to the channel. A pong (MsgPong) answers the ping
// Seq: Ping is that ping's Sent, Recv the answering side's clock when the
// ping was read from the channel. The agent's pings carry the last pong
// the host sent it: PongSent (the host's clock) and PongRecv (the
// guest's, when it was read), a host-to-guest sample only the guest saw.
type Ping struct {
	Seq      int    `json:"seq"`
	Ping     uint64 `json:"ping,omitempty"`
	Recv     uint64 `json:"recv,omitempty"`
	PongSent uint64 `json:"pong_sent,omitempty"`
	PongRecv uint64 `json:"pong_recv,omitempty"`
	Sent     uint64 `json:"sent,omitempty"`
}

// Message is a fault, library error or drop as dtrace(1M) words it on
// standard error (MsgMessage), or why the program could not run
// (MsgError).
type Message struct {
	Text string `json:"text"`
}

// Done ends the agent's side.
type Done struct {
	Status int `json:"status"`
}

// Conn is one end of an agent connection: messages framed as a 4-byte
// big-endian length, a type byte and a JSON body. Send may be called
// from several goroutines; Receive from one.
type Conn struct {
	r   *bufio.Reader
	sr  *stampReader
	w   io.Writer
	now func() uint64
	mu  sync.Mutex
	wb  []byte
	at  uint64
}

// stampReader notes when each read from the channel returned. Where the
// channel is a file or socket, the read first waits in poll(2)
// (waitReadable), so that it runs as soon as the kernel wakes the
// waiting thread; the clock is still read after the read returns, since
// the read may bring bytes that came after poll returned.
type stampReader struct {
	r   io.Reader
	rc  syscall.RawConn
	now func() uint64
	at  uint64
}

// pollSlice is how long a read waits in poll(2) before it waits in Go's
// poller, which keeps the channel's read deadlines.
const pollSlice = 1000 // milliseconds

func (s *stampReader) Read(p []byte) (int, error) {
	if s.rc != nil {
		waitReadable(s.rc, pollSlice)
	}
	n, err := s.r.Read(p)
	if n > 0 {
		s.at = s.now()
	}
	return n, err
}

// NewConn frames messages over rw; its clock stamps are
// CLOCK_MONOTONIC.
func NewConn(rw io.ReadWriter) *Conn { return newConn(rw, output.Monotonic) }

func newConn(rw io.ReadWriter, now func() uint64) *Conn {
	sr := &stampReader{r: rw, now: now}
	if sc, ok := rw.(syscall.Conn); ok {
		sr.rc, _ = sc.SyscallConn()
	}
	return &Conn{r: bufio.NewReaderSize(sr, 64<<10), sr: sr, w: rw, now: now}
}

// Send writes one message; v is its body (nil: none).
func (c *Conn) Send(typ byte, v any) error {
	body := []byte{}
	if v != nil {
		var err error
		if body, err = json.Marshal(v); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.write(typ, body)
}

// writeDeadliner is a channel whose writes can be bounded.
type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

// write writes one frame, within IdleTimeout when the channel allows (a
// virtio-serial port blocks writes while no host is connected); c.mu is
// held.
func (c *Conn) write(typ byte, body []byte) error {
	if d, ok := c.w.(writeDeadliner); ok {
		d.SetWriteDeadline(time.Now().Add(IdleTimeout))
	}
	c.wb = binary.BigEndian.AppendUint32(c.wb[:0], uint32(1+len(body)))
	c.wb = append(c.wb, typ)
	c.wb = append(c.wb, body...)
	_, err := c.w.Write(c.wb)
	return err
}

// SendPing writes a ping or a pong (typ) whose Sent is the clock read
// right before the write, after the encoding and once no other message
// is being written, so that the time a sample measures is the channel's.
// It returns that time.
func (c *Conn) SendPing(typ byte, p Ping) (uint64, error) {
	p.Sent = 0
	body, err := json.Marshal(p)
	if err != nil {
		return 0, err
	}
	body = body[:len(body)-1] // the closing brace: "sent" goes last
	if len(body) > 1 {
		body = append(body, ',')
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	body = strconv.AppendUint(append(body, `"sent":`...), now, 10)
	return now, c.write(typ, append(body, '}'))
}

// Arrived is when the message Receive returned last was read from the
// channel: the clock when the read that brought its first byte returned.
func (c *Conn) Arrived() uint64 { return c.at }

// ErrGarbage wraps what makes a message unreadable.
var ErrGarbage = errors.New("garbage message")

// Receive reads one message: its type and body. A length beyond
// MaxFrame, an empty frame or a truncated one is ErrGarbage (io.EOF
// when the stream ends between messages).
func (c *Conn) Receive() (byte, []byte, error) {
	var hdr [4]byte
	if c.r.Buffered() == 0 {
		if _, err := c.r.Peek(1); err != nil {
			return 0, nil, err
		}
	}
	c.at = c.sr.at
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return 0, nil, fmt.Errorf("%w: truncated length", ErrGarbage)
		}
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrame {
		return 0, nil, fmt.Errorf("%w: length %d", ErrGarbage, n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		return 0, nil, fmt.Errorf("%w: truncated after %d of %d bytes", ErrGarbage, len(buf), n)
	}
	return buf[0], buf[1:], nil
}

// expect decodes a message that must be of type want (named what in the
// error) into v.
func expect(typ, want byte, what string, body []byte, v any) error {
	if typ != want {
		return fmt.Errorf("%w: message %q where %s was expected", ErrGarbage, typ, what)
	}
	return decode(typ, body, v)
}

// decode reads a message's body into v.
func decode(typ byte, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: message %q: %v", ErrGarbage, typ, err)
	}
	return nil
}

// checkHello reads the peer's hello (role says who it is: "its agent",
// "the host"): it must be a dtrace agent's of this Version.
func checkHello(typ byte, body []byte, role string) (*Hello, error) {
	var h Hello
	if typ != MsgHello || decode(typ, body, &h) != nil || h.Magic != magic {
		return nil, fmt.Errorf("%w: the peer is not a dtrace agent", ErrGarbage)
	}
	if h.Version != Version {
		return &h, fmt.Errorf("%s (%s) speaks dtrace agent protocol version %d, this dtrace speaks version %d: "+
			"run the same dtrace on both sides", role, h.Machine, h.Version, Version)
	}
	return &h, nil
}
