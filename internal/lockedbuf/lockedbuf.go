// Package lockedbuf is a bytes.Buffer that several goroutines may write
// and read at once: a child process's output (exec copies it from its own
// goroutines) that a test or the conformance runner reads while the
// process runs.
package lockedbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it. The zero value keeps everything;
// a positive Limit keeps only the first Limit bytes (writes still
// succeed). It has no ReadFrom, on purpose: exec would use one to copy a
// child's output, and bytes.Buffer's grows the buffer outside any lock
// while it waits to read.
type Buffer struct {
	Limit int
	mu    sync.Mutex
	buf   bytes.Buffer
}

// Write appends p, or as much of it as Limit leaves room for.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := p
	if b.Limit > 0 {
		q = q[:min(len(q), max(b.Limit-b.buf.Len(), 0))]
	}
	b.buf.Write(q)
	return len(p), nil
}

// String returns what the buffer holds.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Len returns how many bytes the buffer holds.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
