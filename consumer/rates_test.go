//go:build linux

package consumer

import (
	"testing"
	"time"
)

func TestRateDue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var last time.Time
	steps := []struct {
		at   time.Duration
		due  bool
		last time.Duration
	}{
		{0, true, 0},                                     // the first is due at once
		{400 * time.Millisecond, false, 0},               // within the interval
		{1100 * time.Millisecond, true, time.Second},     // on the grid, not at now
		{1900 * time.Millisecond, false, time.Second},    // 0.9s after the grid point
		{3500 * time.Millisecond, true, 2 * time.Second}, // late: one step
		{3600 * time.Millisecond, true, 3 * time.Second}, // and catches up
		{3700 * time.Millisecond, false, 3 * time.Second},
	}
	for _, s := range steps {
		if got := rateDue(&last, t0.Add(s.at), time.Second); got != s.due {
			t.Errorf("at %v: due %v, want %v", s.at, got, s.due)
		}
		if want := t0.Add(s.last); !last.Equal(want) {
			t.Errorf("at %v: last %v, want %v", s.at, last.Sub(t0), s.last)
		}
	}
}

// TestRatesHonoured checks that switchrate and aggrate limit passes and
// snapshots only once set, as dtrace's defaults for them are 0.
func TestRatesHonoured(t *testing.T) {
	c := New(Config{})
	now := time.Unix(2000, 0)
	if d := c.switchDue(now); d != 0 {
		t.Fatalf("switchrate unset: wait %v, want none", d)
	}
	if err := c.refresh(now); err != nil || !c.lastAgg.IsZero() {
		t.Fatalf("aggrate unset: snapshot taken (%v, %v)", c.lastAgg, err)
	}
	// As setopt() leaves them.
	c.set.SwitchRate, c.set.AggRate = 100*time.Millisecond, 5*time.Second
	if d := c.switchDue(now); d != 0 {
		t.Fatalf("first pass: wait %v", d)
	}
	if d := c.switchDue(now.Add(30 * time.Millisecond)); d != 70*time.Millisecond {
		t.Errorf("second pass: wait %v, want 70ms", d)
	}
	// A pass that finds no data ends after the switchrate and takes the
	// snapshot; the first pass's end makes the next one read again.
	c.startPass(now)
	if err := c.idlePass(now.Add(50*time.Millisecond), c.set.SwitchRate); err != nil || !c.passPending {
		t.Fatalf("pass ended before the switchrate (%v)", err)
	}
	if err := c.idlePass(now.Add(100*time.Millisecond), c.set.SwitchRate); err != nil || c.passPending {
		t.Fatalf("idle pass did not end (%v)", err)
	}
	if !c.lastAgg.IsZero() || !c.lastSwitch.IsZero() {
		t.Errorf("after the first pass: lastAgg %v, lastSwitch %v, want both reset", c.lastAgg, c.lastSwitch)
	}
	at := now.Add(time.Second)
	c.startPass(at)
	if err := c.endPass(at); err != nil || !c.lastAgg.Equal(at) {
		t.Fatalf("second pass: lastAgg %v, want %v (%v)", c.lastAgg, at, err)
	}
	if err := c.endPass(at.Add(4 * time.Second)); err != nil || !c.lastAgg.Equal(at) {
		t.Errorf("snapshot within the aggrate: lastAgg %v", c.lastAgg)
	}
	if err := c.freshSnapshot(); err != nil || c.lastAgg.Equal(at) {
		t.Errorf("stopping did not read afresh: lastAgg %v", c.lastAgg)
	}
}

// TestLastPass checks the wait at the end of a run under a switchrate, as
// dtrace-utils' last dtrace_consume() waits: none without a switchrate;
// the whole switchrate after exit(); after the caller's stop only when
// nothing was delivered since; a signal during the wait (Hurry) ends it,
// one before it does not.
func TestLastPass(t *testing.T) {
	now := time.Unix(3000, 0)
	c := New(Config{})
	c.beginLastPass(now)
	if !c.done || !c.lastPassEnd.IsZero() {
		t.Fatal("no switchrate: the run did not end at once")
	}

	const rate = 40 * time.Millisecond
	byExit := func() *Consumer {
		c := New(Config{})
		c.set.SwitchRate = rate
		c.records, c.exitStop = 3, true
		return c
	}
	c = byExit()
	c.Hurry() // before the wait: no effect
	c.beginLastPass(now)
	if c.done || !c.lastPassEnd.Equal(now.Add(rate)) {
		t.Fatalf("after exit(): done %v, end %v, want a wait to %v", c.done, c.lastPassEnd, now.Add(rate))
	}
	c = byExit()
	start := time.Now()
	c.beginLastPass(start)
	for !c.lastPass() {
	}
	if el := time.Since(start); el < rate || !c.done {
		t.Errorf("last pass ended after %v (done %v), want at least %v", el, c.done, rate)
	}
	c = byExit()
	c.beginLastPass(time.Now().Add(time.Hour))
	if c.lastPass() {
		t.Fatal("last pass ended before its time")
	}
	c.Hurry()
	if !c.lastPass() || !c.done {
		t.Error("Hurry during the last pass did not end it")
	}

	// Stopped by the caller: the pass that delivered records is the last.
	c = New(Config{})
	c.set.SwitchRate = rate
	c.records = 2
	c.recordsAtStop = 1
	c.beginLastPass(now)
	if !c.done {
		t.Error("caller's stop with records delivered: the run did not end at once")
	}
	c = New(Config{})
	c.set.SwitchRate = rate
	c.records, c.recordsAtStop = 2, 2
	c.beginLastPass(now)
	if c.done || c.lastPassEnd.IsZero() {
		t.Error("caller's stop with nothing delivered: no wait")
	}
}
