package agent

import (
	"math"
	"sort"
	"sync"
)

// Clock maps a guest's CLOCK_MONOTONIC onto the host's from the clock
// messages both sides exchange. Each message is a one-way sample: the
// sender's clock when it was written to the channel and the receiver's
// when it was read. With the offset o(t) = guest − host at host time t,
// a message from the host sent at host time h and read at guest time g
// took g − o − h ≥ 0, so o ≤ g − h: an upper bound; one from the guest
// gives a lower bound the same way. The offset is taken as a line,
// o(t) = a + b·t (b the drift), fitted over the whole run to lie in the
// middle of the corridor the bounds leave, as wide a margin from both
// sides as there can be. Only the samples of least delay shape the
// corridor (the lower convex hull of the upper bounds and the upper hull
// of the lower bounds), so the samples are pruned to those hulls as they
// grow. The drift is fitted only once both kinds of bound cover
// minRateSpan of host time; before, the line is flat.
type Clock struct {
	mu       sync.Mutex
	up, down []point // upper bounds (host to guest), lower bounds
	n        int
	dirty    bool
	f        fit
}

// point is a bound on the offset (guest − host nanoseconds) at host
// time t.
type point struct{ t, d int64 }

// fit is the line o(t) = a + b·(t − t0), and bound the error bound:
// half the corridor's narrowest width around it.
type fit struct {
	t0, last int64
	a, b     float64
	bound    float64
}

const (
	// minRateSpan is how much host time both kinds of bound must cover
	// for a drift to be fitted.
	minRateSpan = 2e9
	// maxDrift bounds the drift fitted (1,000 ppm).
	maxDrift = 1e-3
	// maxPoints is how many bounds of a kind are kept before they are
	// pruned to their hull (which is all the fit uses).
	maxPoints = 4096
)

// Up adds a message from the host, written at host time sent and read
// at guest time recv.
func (c *Clock) Up(sent, recv uint64) { c.add(&c.up, sent, recv, int64(recv)-int64(sent)) }

// Down adds a message from the guest, written at guest time sent and
// read at host time recv.
func (c *Clock) Down(sent, recv uint64) { c.add(&c.down, recv, sent, int64(sent)-int64(recv)) }

// Sample adds a ping-pong the guest answered at once: the host's times
// when the ping left (sent) and the pong came back (recv), the guest's
// when it answered.
func (c *Clock) Sample(sent, guest, recv uint64) {
	if recv < sent {
		return
	}
	c.Up(sent, guest)
	c.Down(guest, recv)
}

func (c *Clock) add(ps *[]point, t, other uint64, d int64) {
	if t == 0 || other == 0 {
		return // a stamp missing
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	*ps = append(*ps, point{int64(t), d})
	if len(*ps) > maxPoints {
		*ps = hull(*ps, ps == &c.down)
	}
	c.dirty = true
}

// hull returns the lower convex hull of ps (upper: the upper hull), in
// time order: the points where the minimum (maximum) of d − b·t over
// ps is reached, whatever b.
func hull(ps []point, upper bool) []point {
	s := append([]point(nil), ps...)
	sort.Slice(s, func(i, j int) bool { return s[i].t < s[j].t || s[i].t == s[j].t && s[i].d < s[j].d })
	var h []point
	for _, p := range s {
		if len(h) > 0 && h[len(h)-1].t == p.t {
			// Of equal times (sorted by d), the lower hull keeps the
			// lowest, the upper the highest.
			if !upper {
				continue
			}
			h = h[:len(h)-1]
		}
		for len(h) >= 2 {
			o, a := h[len(h)-2], h[len(h)-1]
			cross := float64(a.t-o.t)*float64(p.d-o.d) - float64(a.d-o.d)*float64(p.t-o.t)
			if upper && cross < 0 || !upper && cross > 0 {
				break
			}
			h = h[:len(h)-1]
		}
		h = append(h, p)
	}
	return h
}

// edges returns the lowest upper bound and the highest lower bound on
// a + b·(t − t0) at slope b.
func edges(lo, hi []point, t0 int64, b float64) (top, bottom float64) {
	top, bottom = math.Inf(1), math.Inf(-1)
	for _, p := range lo {
		top = min(top, float64(p.d)-b*float64(p.t-t0))
	}
	for _, p := range hi {
		bottom = max(bottom, float64(p.d)-b*float64(p.t-t0))
	}
	return top, bottom
}

// span is the host time the points cover.
func span(ps []point) (first, last int64) {
	first, last = math.MaxInt64, math.MinInt64
	for _, p := range ps {
		first, last = min(first, p.t), max(last, p.t)
	}
	return first, last
}

// current returns the fit of the samples so far; c.mu is held.
func (c *Clock) current() fit {
	if !c.dirty {
		return c.f
	}
	c.dirty = false
	lo, hi := hull(c.up, false), hull(c.down, true)
	if len(lo) == 0 && len(hi) == 0 {
		return c.f
	}
	uf, ul := span(lo)
	df, dl := span(hi)
	f := fit{t0: min(uf, df), last: max(ul, dl)}
	switch {
	case len(hi) == 0:
		f.a, _ = edges(lo, nil, f.t0, 0)
	case len(lo) == 0:
		_, f.a = edges(nil, hi, f.t0, 0)
	default:
		gap := func(b float64) float64 {
			top, bottom := edges(lo, hi, f.t0, b)
			return top - bottom
		}
		if min(ul, dl)-max(uf, df) >= minRateSpan {
			f.b = widest(gap)
		}
		top, bottom := edges(lo, hi, f.t0, f.b)
		f.a, f.bound = (top+bottom)/2, math.Abs(top-bottom)/2
	}
	c.f = f
	return f
}

// widest returns the slope b, |b| ≤ maxDrift, where gap(b), a concave
// function, is widest: a golden-section search finds its top, and where
// the top is flat, within 1% (the narrowest corridor is at one end of
// the run, and lines of several slopes pass it as well), the middle of
// the flat, so that the line is centred at the other end too.
func widest(gap func(b float64) float64) float64 {
	l, r := -maxDrift, maxDrift
	const phi = 0.6180339887498949
	for i := 0; i < 100; i++ {
		m1, m2 := r-phi*(r-l), l+phi*(r-l)
		if gap(m1) < gap(m2) {
			l = m1
		} else {
			r = m2
		}
	}
	b := (l + r) / 2
	// Within 1% of the top: the samples of one calibration are spread
	// over milliseconds, which tilts a flat top by a fraction of that.
	top := gap(b)
	top -= max(math.Abs(top)/100, 1)
	// edge finds where gap crosses top between in (at or above it) and
	// out (below).
	edge := func(in, out float64) float64 {
		for i := 0; i < 60; i++ {
			if m := (in + out) / 2; gap(m) < top {
				out = m
			} else {
				in = m
			}
		}
		return in
	}
	l, r = -maxDrift, maxDrift
	if gap(l) < top {
		l = edge(b, l)
	}
	if gap(r) < top {
		r = edge(b, r)
	}
	return (l + r) / 2
}

// ToHost maps a guest time onto the host's clock by the line fitted so
// far.
func (c *Clock) ToHost(guest uint64) uint64 {
	c.mu.Lock()
	f := c.current()
	c.mu.Unlock()
	// guest = h + a + b·(h − t0), so h − t0 = (guest − t0 − a)/(1 + b).
	h := f.t0 + int64(math.Round((float64(int64(guest)-f.t0)-f.a)/(1+f.b)))
	return uint64(max(h, 0))
}

// Rate is the drift: how many nanoseconds the guest's clock gains on
// the host's per host second.
func (c *Clock) Rate() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current().b * 1e9
}

// Estimate returns the offset (guest minus host, nanoseconds) at the
// last sample, its error bound (half the width of the corridor the
// samples leave around the fitted line, at its narrowest) and how many
// one-way samples were taken.
func (c *Clock) Estimate() (offset int64, bound uint64, samples int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.current()
	return int64(math.Round(f.a + f.b*float64(f.last-f.t0))), uint64(math.Round(f.bound)), c.n
}
