package consumer

// recRing is a CPU's user-space ring under the ring policy: the newest
// records whose charges add up to at most size, with their times, in
// one byte buffer allocated once (so that a long run's memory stays
// flat). A record that does not fit pushes out the oldest ones.
type recRing struct {
	size int
	buf  []byte
	ents []ringEnt // circular: n entries from front
	fr   int
	n    int
	used int // charges of the entries
	w    int // where the next record's bytes go
}

type ringEnt struct {
	off, len, charge int
	st               Stamp
}

func newRecRing(size int) *recRing { return &recRing{size: size} }

// add keeps rec (copied) with its stamp, charged charge, pushing out the
// oldest records as needed. A record charged more than the whole ring is
// not kept.
func (r *recRing) add(rec []byte, st Stamp, charge int) {
	if charge > r.size || len(rec) > 2*r.size {
		return
	}
	if r.buf == nil {
		// Twice the size: the records kept take at most size bytes
		// (when charged their length), the rest absorbs the gap a
		// record leaves when it goes back to the start.
		r.buf = make([]byte, 2*r.size)
	}
	for r.n > 0 && r.used+charge > r.size {
		r.pop()
	}
	at := r.w
	if at+len(rec) > len(r.buf) {
		at = 0
	}
	// The bytes the record takes may still hold the oldest records.
	for r.n > 0 && overlaps(r.ents[r.fr], at, len(rec)) {
		r.pop()
	}
	copy(r.buf[at:], rec)
	r.w = at + len(rec)
	if r.n == len(r.ents) {
		r.grow()
	}
	r.ents[(r.fr+r.n)%len(r.ents)] = ringEnt{off: at, len: len(rec), charge: charge, st: st}
	r.n++
	r.used += charge
}

func overlaps(e ringEnt, at, n int) bool {
	return e.off < at+n && at < e.off+e.len
}

func (r *recRing) pop() {
	r.used -= r.ents[r.fr].charge
	r.fr = (r.fr + 1) % len(r.ents)
	r.n--
	if r.n == 0 {
		r.fr, r.w = 0, 0
	}
}

func (r *recRing) grow() {
	ents := make([]ringEnt, max(2*len(r.ents), 64))
	for i := 0; i < r.n; i++ {
		ents[i] = r.ents[(r.fr+i)%len(r.ents)]
	}
	r.ents, r.fr = ents, 0
}

// len is the number of records kept.
func (r *recRing) len() int { return r.n }

// peek returns the oldest record and its stamp.
func (r *recRing) peek() ([]byte, Stamp) {
	e := r.ents[r.fr]
	return r.buf[e.off : e.off+e.len], e.st
}
