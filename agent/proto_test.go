package agent

import (
	"bytes"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
)

// TestFrames: messages go through whole; an empty, oversized or
// truncated frame is garbage, not a panic or a hang.
func TestFrames(t *testing.T) {
	var b bytes.Buffer
	c := NewConn(&b)
	if err := c.Send(MsgPing, Ping{Seq: 3, Host: 42}); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(MsgStop, nil); err != nil {
		t.Fatal(err)
	}
	typ, body, err := c.Receive()
	var p Ping
	if err != nil || typ != MsgPing || decode(typ, body, &p) != nil || p.Seq != 3 || p.Host != 42 {
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
			"its agent (vm9) speaks dtrace agent protocol version 2, this dtrace speaks version 1: run the same dtrace on both sides"},
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
	if _, err := Dial("vm1", "vsock:3:1234", now); err == nil || !strings.Contains(err.Error(), "vsock is not supported yet") {
		t.Errorf("vsock: %v", err)
	}
}

// TestClock: the offset comes from the sample with the shortest round
// trip among the recent ones, and follows a drifting guest.
func TestClock(t *testing.T) {
	var c Clock
	const off = 5_000_000_000
	// Round trips of 900, 100 and 500 ns; the answer is taken 30 ns
	// after the middle of the 100 ns one.
	c.Sample(1000, 1000+450+off+200, 1900)
	c.Sample(3000, 3000+50+off+30, 3100)
	c.Sample(5000, 5000+250+off-100, 5500)
	o, bound, n := c.Estimate()
	if o != off+30 || bound != 50 || n != 3 {
		t.Errorf("offset %d bound %d samples %d", o, bound, n)
	}
	if got := c.ToHost(10_000 + off + 30); got != 10_000 {
		t.Errorf("ToHost %d", got)
	}
	// Drift: after keepSamples newer samples the old best is forgotten.
	for i := 0; i < keepSamples; i++ {
		h := uint64(100_000 + i*1000)
		c.Sample(h, h+100+off+7000, h+200)
	}
	if o, _, _ := c.Estimate(); o != off+7000 {
		t.Errorf("after drift: offset %d", o)
	}
	c.Sample(10, 5, 5) // received before sent: ignored
	if _, _, n := c.Estimate(); n != 3+keepSamples {
		t.Errorf("%d samples", n)
	}
}

// TestClockDrift: a guest clock that runs 50 ppm fast is mapped to within
// a round trip, where the offset alone would be off by the drift.
func TestClockDrift(t *testing.T) {
	var c Clock
	guest := func(h uint64) uint64 { return h + h/20000 + 7e9 } // +50 ppm
	// A ping every 200 ms for 30 s, round trips of 100 to 900 µs.
	var h uint64 = 1e9
	for i := 0; i < 150; i++ {
		rtt := uint64(100e3 + (i*7919)%800e3)
		c.Sample(h, guest(h+rtt/2), h+rtt)
		h += 200e6
	}
	if r := c.Rate(); r < 45e3 || r > 55e3 {
		t.Errorf("rate %.0f ns/s, want 50000", r)
	}
	// 10 s after the last sample the offset alone is 500 µs off.
	at := h + 10e9
	got := c.ToHost(guest(at))
	if d := int64(got) - int64(at); d < -50e3 || d > 50e3 {
		t.Errorf("mapped %d ns off", d)
	}
}

// TestMerge: every machine's entries stay apart under its name, the
// first key; aggregations print in id order.
func TestMerge(t *testing.T) {
	d0 := &aggregate.Desc{ID: 0, Name: "@", Func: aggregate.Count}
	d1 := &aggregate.Desc{ID: 1, Name: "@s", Func: aggregate.Sum}
	host := aggregate.New(d0)
	host.Add([]format.Value{format.String("getppid")}, []int64{7})
	hs := aggregate.New(d1)
	guest := wireAggs([]*aggregate.Agg{host, hs}, nil)
	guest.Aggs[0].Entries[0].Data = []int64{2468}
	guest.Aggs[1].Entries = append(guest.Aggs[1].Entries, AggEntry{Key: []Value{{Int: &format.Int{Bits: 3, Size: 4}}}, Data: []int64{9}})
	merged := Merge("host", []*aggregate.Agg{host}, []MachineAggs{{"vm1", guest.Aggs}})
	if len(merged) != 2 || merged[0].Desc.ID != 0 || merged[1].Desc.ID != 1 {
		t.Fatalf("merged %v", merged)
	}
	got := map[string]int64{}
	for _, e := range merged[0].Entries() {
		got[string(e.Key[0].(format.String))+" "+string(e.Key[1].(format.String))] = e.Data[0]
	}
	if got["host getppid"] != 7 || got["vm1 getppid"] != 2468 || len(got) != 2 {
		t.Errorf("merged entries %v", got)
	}
	e := merged[1].Entries()
	if len(e) != 1 || e[0].Key[0] != format.String("vm1") || e[0].Key[1].(format.Int).Int64() != 3 || e[0].Data[0] != 9 {
		t.Errorf("@s %v", e)
	}
}
