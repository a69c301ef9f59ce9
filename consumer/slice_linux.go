package consumer

import (
	"encoding/binary"
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// errSliceSpent stops a drain whose time slice is spent; the record it
// stopped at stays queued.
var errSliceSpent = errors.New("buffers: slice spent")

// SetSlice bounds the time each Poll or Drain spends delivering records
// to d (0: no bound). What a call leaves stays queued, in order, for the
// next; Pending reports it. Flush and Sync deliver everything.
func (b *Buffers) SetSlice(d time.Duration) {
	b.mu.Lock()
	b.slice = d
	b.mu.Unlock()
}

// startSlice starts the slice of a drain. The caller holds b.mu.
func (b *Buffers) startSlice() {
	if b.slice > 0 {
		b.deadline = time.Now().Add(b.slice)
	}
}

// spent reports whether the drain in progress used its slice up.
func (b *Buffers) spent() bool {
	return !b.deadline.IsZero() && time.Now().After(b.deadline)
}

// Pending reports whether records wait in a backlog that a sliced Poll
// or Drain did not deliver. Records Temporal holds back until no CPU can
// send an older one do not count: they wait for their time, not for the
// consumer, and Flush releases them all.
func (b *Buffers) Pending() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pending()
}

// pending is Pending; the caller holds b.mu.
func (b *Buffers) pending() bool {
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		c.qmu.Lock()
		n := c.queued
		c.qmu.Unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// Seq returns the number of the latest copy out of the kernel rings.
// Every record delivered with a RecordSeq at most Seq's value was
// written before Seq was called.
func (b *Buffers) Seq() uint64 { return b.seq.Load() }

// RecordSeq returns the number of the copy out of the kernel ring that
// brought the record a Handler is handling (the largest number when
// unknown), so that a handler can tell whether something it read after
// Seq returned n is newer than the record: it is when RecordSeq <= n.
// Like Stamp, a Handler may call it.
func (b *Buffers) RecordSeq() uint64 { return b.curSeq }

// DiscardBacklog drops what the backlogs and kernel rings hold and what
// Temporal holds back, counting every record as a drop of its CPU (see
// Drops), for a consumer that must stop now rather than deliver it.
// Under the ring policy it does nothing: what the user-space rings keep
// is bounded by bufsize and delivered by Flush.
func (b *Buffers) DiscardBacklog() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.opts.Policy == PolicyRing {
		return
	}
	for _, c := range b.cpus {
		if c == nil {
			continue
		}
		c.qmu.Lock()
		c.pull()
		for _, ch := range c.queue {
			c.dropped += countSamples(ch.data[ch.off:])
			if len(c.spare) < maxSpare {
				c.spare = append(c.spare, ch.data[:0])
			}
		}
		c.queue, c.queued = nil, 0
		c.qmu.Unlock()
		c.dropped += uint64(len(c.held))
		clear(c.held)
		c.held = c.held[:0]
		if c.space != nil {
			select {
			case c.space <- struct{}{}:
			default:
			}
		}
	}
}

// countSamples counts the sample records of a backlog chunk; lost
// records it holds count what they report.
func countSamples(chunk []byte) uint64 {
	var n uint64
	for off := 0; off+8 <= len(chunk); {
		typ := binary.NativeEndian.Uint32(chunk[off:])
		size := int(binary.NativeEndian.Uint16(chunk[off+6:]))
		if size < 8 || off+size > len(chunk) {
			break
		}
		switch typ {
		case unix.PERF_RECORD_SAMPLE:
			n++
		case unix.PERF_RECORD_LOST:
			if size >= 8+16 {
				n += binary.NativeEndian.Uint64(chunk[off+16:])
			}
		}
		off += size
	}
	return n
}

// FirstCPU returns the CPU whose buffer the next drain reads first (-1
// when there is none). A record written there before the drain is
// delivered before any other CPU's: dtrace(1M) runs BEGIN there, so
// that what BEGIN records (a freopen(), a heading) comes first.
func (b *Buffers) FirstCPU() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.cpus)
	for i := range n {
		if c := b.cpus[(b.next+i)%n]; c != nil {
			return c.cpu
		}
	}
	return -1
}
