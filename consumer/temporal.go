package consumer

// heldRec is a record read under BufferOptions.Temporal and not yet
// delivered: a copy, since the chunk it was read from is reused.
type heldRec struct {
	rec []byte
	st  Stamp
	seq uint64 // of the pull that copied it (Buffers.RecordSeq)
}

// temporalSlack is how long before a drain began a record may have been
// stamped and still not be in its CPU's ring when the drain reads it
// (perf stamps a sample before it publishes it; an interrupt, or a
// virtual CPU the host preempts, can come between). Records newer than
// the drain's start less this wait for the next drain.
const temporalSlack = 100_000_000 // 100ms

// safeTime returns the time up to which the records read are final under
// Temporal: no record read later can be older. A CPU can still send
// records stamped after the newest one read from it, or after the drain
// began (less temporalSlack), whichever is later; the earliest of these
// over the CPUs bounds them all. The caller holds b.mu.
func (b *Buffers) safeTime(drainStart uint64) uint64 {
	floor := uint64(0)
	if drainStart > temporalSlack {
		floor = drainStart - temporalSlack
	}
	limit := ^uint64(0)
	for _, c := range b.cpus {
		if c != nil {
			limit = min(limit, max(c.last, floor))
		}
	}
	return limit
}

// release delivers the held records stamped up to limit, all CPUs merged
// in time order (the CPU with the oldest first record goes next; ties go
// to the lower CPU). An error from fn stops it; the record that failed
// counts as delivered. The caller holds b.mu.
func (b *Buffers) release(limit uint64, fn Handler) error {
	defer b.compactHeld()
	for {
		var next *cpuBuf
		for _, c := range b.cpus {
			if c == nil || len(c.held) == 0 || c.held[0].st.Time > limit {
				continue
			}
			if next == nil || c.held[0].st.Time < next.held[0].st.Time {
				next = c
			}
		}
		if next == nil || b.spent() {
			return nil
		}
		h := next.held[0]
		next.held[0] = heldRec{}
		next.held = next.held[1:]
		b.cur, b.curSeq = h.st, h.seq
		if err := fn(next.cpu, h.rec); err != nil {
			return err
		}
	}
}

// compactHeld moves each CPU's held records to the start of their array,
// so that the space of those delivered is reused rather than the array
// growing for the whole run.
func (b *Buffers) compactHeld() {
	for _, c := range b.cpus {
		if c == nil || cap(c.held) == 0 {
			continue
		}
		if len(c.held) == 0 {
			c.held = c.held[:0:0]
			continue
		}
		if cap(c.held) > 2*len(c.held) {
			c.held = append(make([]heldRec, 0, 2*len(c.held)), c.held...)
		}
	}
}
