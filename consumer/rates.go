//go:build linux

package consumer

import "time"

// startPass begins a pass over the buffers: it ends when the first
// record comes or, without data, after the switchrate (endPass).
func (c *Consumer) startPass(now time.Time) {
	c.passPending, c.passStart = true, now
}

// idlePass ends a pass that found no data once it waited a switchrate
// (dtrace waits a second when none is set).
func (c *Consumer) idlePass(now time.Time, switchRate time.Duration) error {
	if !c.passPending {
		return nil
	}
	if switchRate <= 0 {
		switchRate = time.Second
	}
	if now.Sub(c.passStart) < switchRate {
		return nil
	}
	return c.endPass(now)
}

// endPass takes the pass's snapshot when the aggrate allows. After the
// first pass (which carries BEGIN's records) the next one reads the
// buffers and the aggregations again at once, as dtrace does.
func (c *Consumer) endPass(now time.Time) error {
	c.passPending = false
	err := c.refresh(now)
	c.passes++
	if c.passes == 1 {
		c.lastAgg = time.Time{}
		c.lastSwitch = time.Time{}
	}
	return err
}

// refresh reads every aggregation when a snapshot is due under the
// aggrate, keeping to the rate's grid. Without an aggrate it does
// nothing: printa() then reads the aggregation it prints.
func (c *Consumer) refresh(now time.Time) error {
	d := c.set.AggRate
	if d <= 0 || !rateDue(&c.lastAgg, now, d) {
		return nil
	}
	return c.snapshotAll()
}

// freshSnapshot reads the aggregations now whatever the aggrate, as
// dtrace does once tracing stopped.
func (c *Consumer) freshSnapshot() error {
	c.passPending = false
	c.lastAgg = time.Time{}
	return c.refresh(time.Now())
}

// switchDue reports how long until the next pass over the buffers may
// run under the switchrate (0: now); when it is due, the pass is counted.
// As in dtrace, passes keep to the rate's grid rather than drifting.
func (c *Consumer) switchDue(now time.Time) time.Duration {
	d := c.set.SwitchRate
	if d <= 0 {
		return 0
	}
	if !c.lastSwitch.IsZero() {
		if rest := d - now.Sub(c.lastSwitch); rest > 0 {
			return rest
		}
	}
	rateDue(&c.lastSwitch, now, d)
	return 0
}

// rateDue reports whether an event at interval d is due at now, last
// being when the previous one was due (zero: none yet), and if so counts
// it: the first at now, the next ones on the grid d apart from it, as
// dtrace spaces its buffer switches and aggregation snapshots.
func rateDue(last *time.Time, now time.Time, d time.Duration) bool {
	switch {
	case last.IsZero():
		*last = now
	case now.Sub(*last) < d:
		return false
	default:
		*last = last.Add(d)
	}
	return true
}

// beginLastPass ends the run once everything was delivered, or, under a
// switchrate, begins a last pass that waits up to one switchrate first,
// as dtrace-utils' last dtrace_consume() waits for data in epoll_wait()
// for the switch interval it starts. After exit() (or a full fill buffer)
// that pass comes after the one that delivered everything, so it waits
// the whole switchrate: dtrace -x switchrate=16sec -n 'BEGIN { exit(0) }'
// takes 16 s. When the caller stopped tracing (a signal, the processes
// gone) the pass that delivers what the buffers hold and END's records is
// the last: it waits only when there was nothing to deliver. dtrace-utils'
// default (no switchrate: a second) is not followed: without a switchrate
// the run ends at once. Nothing is read in the last pass, as no probe
// records anything once tracing stopped.
func (c *Consumer) beginLastPass(now time.Time) {
	d := c.set.SwitchRate
	if d <= 0 || !c.exitStop && c.records != c.recordsAtStop {
		c.done = true
		return
	}
	c.lastPassEnd = now.Add(d)
}

// lastPass waits in slices for the last pass to end (so that the caller
// acts on signals meanwhile) and reports whether it ended.
func (c *Consumer) lastPass() bool {
	rest := time.Until(c.lastPassEnd)
	if rest <= 0 || c.hurried {
		c.done = true
		return true
	}
	time.Sleep(min(rest, 20*time.Millisecond))
	return false
}

// Hurry ends the last pass's wait under a switchrate, if it has begun, at
// once: a signal interrupts dtrace-utils' epoll_wait() and so ends its
// last pass (one that came earlier does not shorten it). dtrace(1M) calls
// it when interrupted.
func (c *Consumer) Hurry() {
	if !c.lastPassEnd.IsZero() {
		c.hurried = true
	}
}
