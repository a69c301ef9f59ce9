package agent

import (
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// TestFrames: messages go through whole; an empty, oversized or
// truncated frame is garbage, not a panic or a hang.
func TestFrames(t *testing.T) {
	var b bytes.Buffer
	c := NewConn(&b)
	c.now = func() uint64 { return 42 }
	c.sr.now = c.now
	if sent, err := c.SendPing(MsgPing, Ping{Seq: 3, PongSent: 7}); err != nil || sent != 42 {
		t.Fatal(sent, err)
	}
	if _, err := c.SendPing(MsgPong, Ping{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(MsgStop, nil); err != nil {
		t.Fatal(err)
	}
	typ, body, err := c.Receive()
	var p Ping
	if err != nil || typ != MsgPing || decode(typ, body, &p) != nil || p.Seq != 3 || p.Sent != 42 || p.PongSent != 7 ||
		c.Arrived() != 42 {
		t.Fatalf("got %q %s %v, arrived %d", typ, body, err, c.Arrived())
	}
	if typ, body, err := c.Receive(); err != nil || typ != MsgPong || string(body) != `{"seq":0,"sent":42}` {
		t.Fatalf("got %q %s %v", typ, body, err)
	}
	if typ, _, err := c.Receive(); err != nil || typ != MsgStop {
		t.Fatalf("got %q %v", typ, err)
	}
	bad := map[string][]byte{
		"empty":     {0, 0, 0, 0},
		"oversized": {0xff, 0, 0, 0},
		"truncated": {0, 0, 0, 9, 'R', '{'},
		"short len": {0, 0},
	}
	for name, in := range bad {
		c := NewConn(&rw{bytes.NewReader(in)})
		if _, _, err := c.Receive(); !errors.Is(err, ErrGarbage) {
			t.Errorf("%s: %v, want garbage", name, err)
		}
	}
	var p2 Ping
	if err := decode(MsgPing, []byte("{nope"), &p2); !errors.Is(err, ErrGarbage) {
		t.Errorf("bad body: %v", err)
	}
}

type rw struct{ *bytes.Reader }

func (rw) Write(p []byte) (int, error) { return len(p), nil }

// fakeAgent listens on a socket and answers the host's hello with reply.
func fakeAgent(t *testing.T, reply func(c *Conn)) string {
	sock := filepath.Join(t.TempDir(), "vm.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		c := NewConn(nc)
		if _, _, err := c.Receive(); err != nil {
			return
		}
		reply(c)
	}()
	return sock
}

// TestDialRefuses: an agent of another version gets a clear message; one
// that sends garbage, or is not an agent, closes that connection with an
// error.
func TestDialRefuses(t *testing.T) {
	now := func() uint64 { return 1 }
	cases := []struct {
		name  string
		reply func(c *Conn)
		want  string
	}{
		{"newer", func(c *Conn) { c.Send(MsgHello, Hello{Magic: magic, Version: Version + 1, Machine: "vm9"}) },
			"its agent (vm9) speaks dtrace agent protocol version 3, this dtrace speaks version 2: run the same dtrace on both sides"},
		{"older", func(c *Conn) { c.Send(MsgHello, Hello{Magic: magic, Version: 1, Machine: "vm8"}) },
			"its agent (vm8) speaks dtrace agent protocol version 1, this dtrace speaks version 2: run the same dtrace on both sides"},
		{"garbage", func(c *Conn) { c.w.Write([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}) }, "garbage message: length"},
		{"stranger", func(c *Conn) { c.Send(MsgHello, Hello{Magic: "ssh", Version: 1}) }, "not a dtrace agent"},
		{"truncated", func(c *Conn) { c.w.Write([]byte{0, 0, 0, 50, 'H'}) }, "truncated after"},
	}
	for _, tc := range cases {
		sock := fakeAgent(t, tc.reply)
		g, err := Dial("vm1", sock, now)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "guest vm1: ") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if g != nil {
			t.Errorf("%s: a guest", tc.name)
		}
	}
	for _, addr := range []string{"vsock:3", "vsock:x:1", "vsock:3:port"} {
		if _, err := Dial("vm1", addr, now); err == nil || err.Error() != "guest vm1: bad vsock address "+addr+": want vsock:CID:PORT" {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// TestClock: the offset lies midway between the tightest bounds the
// one-way samples give, whichever direction they come from.
func TestClock(t *testing.T) {
	var c Clock
	const off = 5_000_000_000
	// Host to guest: 300, 40 and 900 ns; guest to host: 500, 60, 200 ns.
	c.Up(1000, 1000+off+300)
	c.Up(3000, 3000+off+40)
	c.Up(5000, 5000+off+900)
	c.Down(2000+off, 2000+500)
	c.Down(4000+off, 4000+60)
	c.Down(6000+off, 6000+200)
	o, bound, n := c.Estimate()
	// The corridor is off-60 to off+40: its middle is off-10.
	if o != off-10 || bound != 50 || n != 6 {
		t.Errorf("offset %d bound %d samples %d", o, bound, n)
	}
	if got := c.ToHost(10_000 + off - 10); got != 10_000 {
		t.Errorf("ToHost %d", got)
	}
	if r := c.Rate(); r != 0 {
		t.Errorf("a drift (%.0f ns/s) from 5 µs of samples", r)
	}
	c.Up(0, 5)   // a stamp missing: ignored
	c.Down(7, 0) // likewise
	if _, _, n := c.Estimate(); n != 6 {
		t.Errorf("%d samples", n)
	}
	// One kind of bound only: the tightest is taken.
	var up Clock
	up.Up(100, 100+off+70)
	up.Up(200, 200+off+20)
	if o, _, _ := up.Estimate(); o != off+20 {
		t.Errorf("upper bounds only: offset %d", o)
	}
}

// TestClockDrift: a guest clock that runs 50 ppm fast, sampled for 30 s
// with one-way delays of 20 µs to 1 ms, is mapped to within 20 µs across
// the run and 10 s after it, where the offset alone would be off by the
// drift; the samples kept stay bounded.
func TestClockDrift(t *testing.T) {
	var c Clock
	guest := func(h uint64) uint64 { return h + h/20000 + 7e9 } // +50 ppm
	// Each 100 ms one message each way, the delays pseudo-random.
	var h uint64 = 1e9
	for i := 0; i < 300; i++ {
		up, down := uint64(20e3+(i*7919)%980e3), uint64(20e3+(i*104729)%980e3)
		c.Up(h, guest(h+up))
		c.Down(guest(h+50e6), h+50e6+down)
		h += 100e6
	}
	if r := c.Rate(); r < 49e3 || r > 51e3 {
		t.Errorf("rate %.0f ns/s, want 50000", r)
	}
	for _, at := range []uint64{1e9, 16e9, h, h + 10e9} {
		if d := int64(c.ToHost(guest(at))) - int64(at); d < -20e3 || d > 20e3 {
			t.Errorf("%d mapped %d ns off", at, d)
		}
	}
	// Pruned to the hulls past maxPoints: the fit stays the same.
	r := c.Rate()
	for i := 0; i < maxPoints; i++ {
		c.Up(h, guest(h+500e3))
		c.Down(guest(h+50e6), h+50e6+500e3)
		h += 100e6
	}
	if len(c.up) > maxPoints || len(c.down) > maxPoints {
		t.Errorf("%d and %d samples kept", len(c.up), len(c.down))
	}
	if d := c.Rate() - r; d < -500 || d > 500 {
		t.Errorf("rate %.0f ns/s after pruning, %.0f before", c.Rate(), r)
	}
}

// TestClockShortRun: under minRateSpan of samples, no drift is fitted
// even when the bounds would allow a steep one.
func TestClockShortRun(t *testing.T) {
	var c Clock
	c.Up(1e9, 1e9+5e3)
	c.Down(1.5e9+1e3, 1.5e9+2e3)
	if r := c.Rate(); r != 0 {
		t.Errorf("rate %.0f ns/s from 0.5 s", r)
	}
	if o, bound, _ := c.Estimate(); o != 2e3 || bound != 3e3 {
		t.Errorf("offset %d bound %d", o, bound)
	}
}

// TestMerge: every machine's entries stay apart under its name, the
// first key; aggregations print in id order.
func TestMerge(t *testing.T) {
	d0 := &aggregate.Desc{ID: 0, Name: "@", Func: program.AggCount}
	d1 := &aggregate.Desc{ID: 1, Name: "@s", Func: program.AggSum}
	host := aggregate.New(d0)
	host.Add([]program.Value{program.String("getppid")}, []int64{7})
	hs := aggregate.New(d1)
	guest := wireAggs([]*aggregate.Agg{host, hs}, nil)
	guest.Aggs[0].Entries[0].Data = []int64{2468}
	guest.Aggs[1].Entries = append(guest.Aggs[1].Entries, AggEntry{Key: []Value{{Int: &program.Int{Bits: 3, Size: 4}}}, Data: []int64{9}})
	merged := Merge("host", []*aggregate.Agg{host}, []MachineAggs{{"vm1", guest.Aggs}})
	if len(merged) != 2 || merged[0].Desc.ID != 0 || merged[1].Desc.ID != 1 {
		t.Fatalf("merged %v", merged)
	}
	got := map[string]int64{}
	for _, e := range merged[0].Entries() {
		got[string(e.Key[0].(program.String))+" "+string(e.Key[1].(program.String))] = e.Data[0]
	}
	if got["host getppid"] != 7 || got["vm1 getppid"] != 2468 || len(got) != 2 {
		t.Errorf("merged entries %v", got)
	}
	e := merged[1].Entries()
	if len(e) != 1 || e[0].Key[0] != program.String("vm1") || e[0].Key[1].(program.Int).Int64() != 3 || e[0].Data[0] != 9 {
		t.Errorf("@s %v", e)
	}
}

// TestHostSession: the host's side of a session against a fake agent
// that pings too: the host answers the agent's ping, takes its samples
// (and the pong the agent reports), holds the records while tracing and
// maps them all at the end, then calibrates once more before it lets
// the agent go.
func TestHostSession(t *testing.T) {
	var agentClock uint64 = 1e12 // the guest's clock: the host's + 1e12
	pongs := make(chan Ping, 64)
	sock := fakeAgent(t, func(c *Conn) {
		c.now = func() uint64 { return output.Monotonic() + agentClock }
		c.sr.now = c.now
		c.Send(MsgHello, Hello{Magic: magic, Version: Version, Machine: "vm1"})
		for {
			typ, body, err := c.Receive()
			if err != nil {
				return
			}
			switch typ {
			case MsgPing:
				pong(c, body)
			case MsgPong:
				var p Ping
				decode(typ, body, &p)
				pongs <- p
			case MsgProgram:
				c.Send(MsgStarted, Started{Matched: 1})
				// A pong the host sent 1 µs before it arrived.
				now := output.Monotonic()
				c.SendPing(MsgPing, Ping{Seq: 0, PongSent: now - 1000, PongRecv: now + agentClock})
				for i := 0; i < 3; i++ {
					c.Send(MsgRecord, Record{Time: c.now(), Text: "x\n"})
				}
				c.Send(MsgDone, Done{Status: 3})
			}
		}
	})
	g, err := Dial("vm1", sock, output.Monotonic)
	if err != nil {
		t.Fatal(err)
	}
	start := output.Monotonic()
	if n, err := g.Start(Program{}); err != nil || n != 1 {
		t.Fatalf("Start: %d, %v", n, err)
	}
	g.Hold = time.Hour
	var h collect
	go g.Run(&h, time.Hour)
	select {
	case <-g.Done():
	case <-time.After(time.Minute):
		t.Fatal("the session did not end")
	}
	_, status, err := g.Stop(time.Minute)
	if err != nil || status != 3 {
		t.Fatalf("Stop: %d, %v", status, err)
	}
	if len(h.recs) != 3 {
		t.Fatalf("%d records handed over", len(h.recs))
	}
	_, bound, _ := g.Clock.Estimate()
	for _, r := range h.recs {
		if r.Time+bound < start || r.Time > output.Monotonic()+bound {
			t.Errorf("record mapped to %d, the session ran from %d", r.Time, start)
		}
	}
	select {
	case p := <-pongs:
		if p.Seq != 0 || p.Ping == 0 || p.Recv == 0 || p.Sent < p.Recv {
			t.Errorf("pong %+v", p)
		}
	default:
		t.Error("the host did not answer the agent's ping")
	}
	// 16 pings at the start and 16 at the end, the agent's ping and the
	// pong it reported (the host's pinger may add some).
	if _, bound, n := g.Clock.Estimate(); n < 2*2*calibration+2 || bound > uint64(time.Second) {
		t.Errorf("%d samples, bound %d", n, bound)
	}
}

// TestClockFlatTop: a narrow corridor at the start of the run (±50 µs)
// and a wide one at the end (10 s later, -100 to +500 µs) leave every
// drift from -5 to +45 ppm with the same margin: the middle one is
// taken, the line centred at both ends.
func TestClockFlatTop(t *testing.T) {
	var c Clock
	const off = 3e9
	for i := uint64(0); i < 16; i++ {
		h := 1e9 + i*1e6
		c.Up(h, h+off+50e3)
		c.Down(h+off-50e3, h)
		h += 10e9
		c.Up(h, h+off+500e3)
		c.Down(h+off-100e3, h)
	}
	if r := c.Rate(); r < 19e3 || r > 21e3 {
		t.Errorf("drift %.0f ns/s, want 20000", r)
	}
	if o, bound, _ := c.Estimate(); o < off+199e3 || o > off+201e3 || bound < 49e3 || bound > 51e3 {
		t.Errorf("offset at the end %d, bound %d", o, bound)
	}
}
