package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
	"github.com/dtrace-go/dtrace/output/text"
)

// ServeSocket listens on a UNIX socket and serves the first host that
// connects (Serve): an agent for a host on the same machine, as tests
// use it. The channel gets Serve's result.
func ServeSocket(sock string, logw io.Writer) (<-chan error, error) {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		defer l.Close()
		nc, err := l.Accept()
		if err != nil {
			done <- err
			return
		}
		defer nc.Close()
		done <- Serve(nc, logw)
	}()
	return done, nil
}

// Device is what -x agent names, open: a virtio-serial port or a vsock
// connection from the host.
type Device struct {
	*os.File
	// port is set for a virtio-serial port, which reads end-of-file
	// while no host is connected.
	port bool
}

// OpenDevice opens what -x agent names: a virtio-serial port
// (/dev/virtio-ports/NAME), or vsock:PORT, where it waits for the host to
// connect (refusing, and noting on logw, any other peer).
func OpenDevice(dev string, logw io.Writer) (*Device, error) {
	if port, ok := strings.CutPrefix(dev, "vsock:"); ok {
		f, err := acceptVsock(port, logw)
		if err != nil {
			return nil, fmt.Errorf("-x agent=%s: %v", dev, err)
		}
		return &Device{File: f}, nil
	}
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("-x agent=%s: %v", dev, err)
	}
	return &Device{File: f, port: true}, nil
}

// Serve serves one host over rw: it waits for the host's hello, runs the
// program the host sends, streams what it records back, and returns
// once tracing ended (the program exited, the host asked to stop, or the
// host went away), with everything detached. Messages about the session
// go to logw.
func Serve(rw io.ReadWriter, logw io.Writer) error {
	c := NewConn(rw)
	var typ byte
	var body []byte
	for {
		var err error
		typ, body, err = c.Receive()
		if d, ok := rw.(*Device); ok && d.port && errors.Is(err, io.EOF) {
			// No host connected yet: wait for one.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	h, err := checkHello(typ, body, "the host")
	if h == nil {
		return err
	}
	// Answered even when the versions differ: the host says which.
	if err := c.Send(MsgHello, Hello{Magic: magic, Version: Version, Machine: jsonrec.Hostname()}); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	// The host samples the clocks, then sends the program.
	for {
		var err error
		typ, body, err = receive(c, rw, HandshakeTimeout)
		if err != nil {
			return err
		}
		if typ != MsgPing {
			break
		}
		if err := pong(c, body); err != nil {
			return err
		}
	}
	var p Program
	if err := expect(typ, MsgProgram, "a program", body, &p); err != nil {
		return err
	}
	hr := newHostReader(c, rw)
	err = run(c, &p, hr, func(matched int) {
		fmt.Fprintf(logw, "dtrace: agent: tracing for host %s: %d probes\n", h.Machine, matched)
	})
	if err != nil {
		c.Send(MsgError, Message{Text: err.Error()})
	}
	// The host samples the clocks once more, idle, and goes away.
	select {
	case <-hr.ended:
	case <-time.After(calibrateTimeout):
	}
	return err
}

// run compiles and runs the host's program.
func run(c *Conn, p *Program, hr *hostReader, started func(matched int)) error {
	opts := dtrace.NewOptions()
	opts.SetEnv(os.Environ())
	for _, o := range p.Options {
		if err := opts.SetArg(o); err != nil {
			name, _, _ := strings.Cut(o, "=")
			return fmt.Errorf("failed to set -x %s: %v", name, err)
		}
	}
	h, err := dtrace.Open(opts, dtrace.Config{Stderr: os.Stderr, Stamp: true})
	if err != nil {
		return fmt.Errorf("failed to initialize dtrace: %v", err)
	}
	defer h.Close() // detaches everything
	matched := 0
	for _, s := range p.Sources {
		prog, err := h.Compile(dtrace.Source{Name: s.Name, Text: s.Text, Kind: dtrace.SpecKind(s.Kind),
			Script: s.Script, MacroArgs: s.MacroArgs})
		if err != nil {
			return err
		}
		matched += prog.Matches
	}
	if matched == 0 && !opts.ZDefs {
		return errors.New("no probes matched")
	}
	if err := h.Go(); err != nil {
		return fmt.Errorf("could not enable tracing: %v", err)
	}
	if err := c.Send(MsgStarted, Started{Matched: matched}); err != nil {
		return err
	}
	started(matched)
	stopPings := hr.pinger(pingInterval)
	defer stopPings()
	fw := newForwarder(c, h)
	stopped := false
	for done := false; !done; {
		select {
		case <-hr.stop:
			if !stopped {
				if err := h.Stop(); err != nil {
					return err
				}
				stopped = true
			}
		default:
		}
		if done, err = h.Consume(fw); err != nil {
			return err
		}
	}
	stopPings() // none after Done
	if err := h.Aggregations(fw); err != nil {
		return err
	}
	return c.Send(MsgDone, Done{Status: h.ExitStatus()})
}

// forwarder is the agent's renderer: it sends each record to the host
// as text and typed actions, and messages in dtrace's words.
type forwarder struct {
	c     *Conn
	text  *text.Renderer
	tbuf  bytes.Buffer
	mbuf  bytes.Buffer
	col   *jsonrec.Collector
	recs  []*Record
	names map[[2]int][2]string
	sym   format.Symbolizer
	h     *dtrace.Handle
}

func newForwarder(c *Conn, h *dtrace.Handle) *forwarder {
	f := &forwarder{c: c, h: h, names: map[[2]int][2]string{}, sym: h.Symbolizer()}
	set := h.Settings()
	f.text = text.New(text.Config{Stderr: &f.mbuf, Settings: set, Sym: f.sym})
	f.text.SetOutput(&f.tbuf)
	f.col = jsonrec.NewCollector(jsonrec.Config{Settings: set, Sym: f.sym})
	return f
}

func (f *forwarder) Begin(r *output.Record) error {
	k := [2]int{r.PID, r.TID}
	n, ok := f.names[k]
	if !ok {
		n[0], n[1] = f.h.ThreadNames(r.PID, r.TID)
		f.names[k] = n
	}
	f.recs = append(f.recs, &Record{Time: r.Time, PID: r.PID, TID: r.TID, CPU: r.CPU, Process: n[0], Thread: n[1],
		Probe: jsonrec.Probe{ID: r.Probe.ID, Provider: r.Probe.Provider, Module: r.Probe.Module,
			Function: r.Probe.Function, Name: r.Probe.Name}, Clause: r.Clause})
	if err := f.col.Begin(r); err != nil {
		return err
	}
	return f.text.Begin(r)
}

func (f *forwarder) Item(r *output.Record, it *output.Item) error {
	if err := f.col.Item(r, it); err != nil {
		return err
	}
	return f.text.Item(r, it)
}

func (f *forwarder) End(r *output.Record) error {
	rec, ok := output.Pop(&f.recs)
	if !ok {
		return nil
	}
	acts, err := f.col.End(r)
	if err != nil {
		return err
	}
	if err := f.text.End(r); err != nil {
		return err
	}
	if err := f.text.Flush(); err != nil {
		return err
	}
	rec.Actions, rec.Text = acts, f.tbuf.String()
	f.tbuf.Reset()
	if !r.Data && rec.Text == "" {
		return nil
	}
	return f.c.Send(MsgRecord, rec)
}

// message sends what the text renderer worded into mbuf.
func (f *forwarder) message(say func() error) error {
	f.mbuf.Reset()
	if err := say(); err != nil {
		return err
	}
	return f.c.Send(MsgMessage, Message{Text: f.mbuf.String()})
}

func (f *forwarder) Fault(x *output.Fault) error {
	return f.message(func() error { return f.text.Fault(x) })
}

func (f *forwarder) Error(x *output.Error) error {
	return f.message(func() error { return f.text.Error(x) })
}

func (f *forwarder) Drop(x *output.Drop) error {
	return f.message(func() error { return f.text.Drop(x) })
}

func (f *forwarder) Aggregations(aggs []*aggregate.Agg) error {
	return f.c.Send(MsgAggs, wireAggs(aggs, f.sym))
}

func (f *forwarder) Flush() error { return nil }
func (f *forwarder) Close() error { return nil }
