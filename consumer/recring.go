package consumer

import "encoding/binary"

// recRing is a CPU's user-space ring under the ring policy: the newest
// records whose charges add up to at most size, with their stamps, in
// one byte buffer of twice size that the buffers allocate and touch
// once (resident), so that a long run's memory stays flat (a buffer
// whose pages were first written as records reached them, and a table
// of entries that grew with the number of records kept, made the
// resident set of a CPU that the traced work visits rarely grow for
// minutes). A record that does not fit pushes out the oldest ones.
//
// Each record is kept behind a header of ringHdr bytes (u32 charge, u32
// length, then the stamp: u64 time, u32 pid, u32 tid) and padded to 8
// bytes. Records run from fr to w;
// when wrapped, from fr to end, then from 0 to w.
type recRing struct {
	size    int
	buf     []byte
	fr, w   int
	end     int
	wrapped bool
	n       int
	used    int // charges of the records kept
}

// ringHdr is the size of a kept record's header.
const ringHdr = 24

// newRecRing returns a ring of len(buf)/2 bytes kept in buf.
func newRecRing(buf []byte) *recRing { return &recRing{size: len(buf) / 2, buf: buf} }

// add keeps rec (copied) with its stamp, charged charge, pushing out the
// oldest records as needed, and reports whether it did: a record charged
// more than the whole ring is not kept.
func (r *recRing) add(rec []byte, st Stamp, charge int) bool {
	need := ringHdr + (len(rec)+7)&^7
	if charge > r.size || need > len(r.buf) {
		return false
	}
	for r.n > 0 && r.used+charge > r.size {
		r.pop()
	}
	at := r.w
	if at+need > len(r.buf) {
		// Back to the start: what is left before the end goes first.
		for r.wrapped {
			r.pop()
		}
		if r.n > 0 {
			r.end, r.wrapped = r.w, true
		}
		at = 0
	}
	// The bytes the record takes may still hold the oldest records.
	for r.wrapped && r.fr < at+need {
		r.pop()
	}
	le := binary.LittleEndian
	le.PutUint32(r.buf[at:], uint32(charge))
	le.PutUint32(r.buf[at+4:], uint32(len(rec)))
	le.PutUint64(r.buf[at+8:], st.Time)
	le.PutUint32(r.buf[at+16:], st.PID)
	le.PutUint32(r.buf[at+20:], st.TID)
	copy(r.buf[at+ringHdr:], rec)
	r.w = at + need
	r.n++
	r.used += charge
	return true
}

func (r *recRing) pop() {
	le := binary.LittleEndian
	r.used -= int(le.Uint32(r.buf[r.fr:]))
	r.fr += ringHdr + (int(le.Uint32(r.buf[r.fr+4:]))+7)&^7
	r.n--
	if r.wrapped && r.fr >= r.end {
		r.fr, r.wrapped = 0, false
	}
	if r.n == 0 {
		r.fr, r.w, r.wrapped = 0, 0, false
	}
}

// len is the number of records kept.
func (r *recRing) len() int { return r.n }

// peek returns the oldest record and its stamp.
func (r *recRing) peek() ([]byte, Stamp) {
	le := binary.LittleEndian
	h := r.buf[r.fr:]
	n := int(le.Uint32(h[4:]))
	return h[ringHdr : ringHdr+n], Stamp{Time: le.Uint64(h[8:]), PID: le.Uint32(h[16:]), TID: le.Uint32(h[20:])}
}
