//go:build linux

package consumer

import (
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// commit runs commit() and discard(): the records the speculation holds
// are processed (commit) or dropped (discard). Committed records follow
// the commit item, each as a record of its own.
func (c *Consumer) commit(st *recState, data []byte, r program.Record) error {
	id := uint32(u64(data, r.Offset))
	recs := c.specs[id]
	delete(c.specs, id)
	delete(c.specBytes, id)
	kind := program.ActDiscard
	if r.Action == program.ActCommit {
		kind = program.ActCommit
	}
	if err := c.emit(st, output.Item{Kind: kind, N: int64(id)}); err != nil {
		return err
	}
	if kind == program.ActCommit {
		for _, sr := range recs {
			if err := c.process(sr.cpu, sr.data, id, sr.st); err != nil {
				return err
			}
		}
	}
	return nil
}
