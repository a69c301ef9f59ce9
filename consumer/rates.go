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
