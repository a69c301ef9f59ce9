//go:build linux

package consumer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
)

// action runs one record item: its library side (exit status,
// aggregation changes, options, speculations, files, commands) and
// hands it to the renderer, in record order.
func (c *Consumer) action(st *recState, cpu int, data []byte, r program.Record, args []program.Record) error {
	switch r.Action {
	case program.ActTrace:
		return c.emit(st, output.Item{Kind: program.ActTrace, Value: c.boxes.value(data, r)})
	case program.ActSnapshot:
		// Taken once the pass over the buffers is over (the buffers
		// are being read now).
		if le.Uint32(data[r.Offset:]) != 0 {
			c.pendingSnaps = append(c.pendingSnaps, st.rec.Probe.String())
		}
		return nil
	case program.ActPrint:
		if r.Type == nil {
			return c.emit(st, output.Item{Kind: program.ActTrace, Value: value(data, r)})
		}
		ti := c.types[r.Type]
		if ti == nil {
			ti = printTypeInfo(r.Type, 0)
			c.types[r.Type] = ti
		}
		if r.ByValue {
			return c.emit(st, output.Item{Kind: program.ActPrint, Type: ti, ByValue: true,
				Data: data[r.Offset : r.Offset+r.Size]})
		}
		return c.emit(st, output.Item{Kind: program.ActPrint, Addr: u64(data, r.Offset),
			Type: ti, Data: data[r.Offset+8 : r.Offset+r.Size]})
	case program.ActTracemem:
		b := data[r.Offset : r.Offset+r.Size]
		if len(args) == 1 {
			// tracemem()'s nbytes: a negative count or one above the
			// size shows it all, 0 nothing (as dtrace-utils).
			if n := int64(le.Uint64(data[args[0].Offset:])); n >= 0 && n < int64(len(b)) {
				if n == 0 {
					return nil
				}
				b = b[:n]
			}
		}
		return c.emit(st, output.Item{Kind: program.ActTracemem, Data: b})
	case program.ActPrintf:
		f, err := c.format(r.FormatID)
		if err != nil {
			return err
		}
		return c.emit(st, output.Item{Kind: program.ActPrintf, Format: f, Args: c.args(st, data, args)})
	case program.ActSystem:
		return c.system(st, data, r, args)
	case program.ActFreopen:
		return c.freopen(st, data, r, args)
	case program.ActFtruncate:
		return c.emit(st, output.Item{Kind: program.ActFtruncate})
	case program.ActPcap:
		return c.pcap(st, data, r, args)
	case program.ActExit:
		c.status, c.sawExit = int(int32(le.Uint32(data[r.Offset:]))), true
		return c.emit(st, output.Item{Kind: program.ActExit, N: int64(c.status)})
	case program.ActStack, program.ActUStack:
		return c.emit(st, output.Item{Kind: program.ActStack, Value: value(data, r)})
	case program.ActSym, program.ActMod, program.ActUSym, program.ActUMod:
		return c.emit(st, output.Item{Kind: program.ActSym, Value: value(data, r)})
	case program.ActPrinta:
		return c.printa(st, r, args)
	case program.ActClear:
		if err := c.clear(r.AggID); err != nil {
			return err
		}
		return c.emitAgg(st, program.ActClear, r.AggID, 0)
	case program.ActTrunc:
		n := int64(0)
		if len(args) > 0 {
			n = int64(u64(data, args[0].Offset))
		}
		if err := c.trunc(r.AggID, n); err != nil {
			return err
		}
		return c.emitAgg(st, program.ActTrunc, r.AggID, n)
	case program.ActNormalize:
		if r.AggID >= 0 && r.AggID < len(c.aggs) && len(args) > 0 {
			n := u64(data, args[0].Offset)
			c.aggs[r.AggID].Normalize(n)
			return c.emitAgg(st, program.ActNormalize, r.AggID, int64(n))
		}
	case program.ActDenormalize:
		if r.AggID >= 0 && r.AggID < len(c.aggs) {
			c.aggs[r.AggID].Denormalize()
			return c.emitAgg(st, program.ActDenormalize, r.AggID, 0)
		}
	case program.ActSetopt:
		return c.setopt(st, data, r, args)
	case program.ActCommit, program.ActDiscard:
		return c.commit(st, data, r)
	}
	return nil
}

// emitAgg hands over an item about aggregation id.
func (c *Consumer) emitAgg(st *recState, kind program.Action, id int, n int64) error {
	it := output.Item{Kind: kind, N: n}
	if id >= 0 && id < len(c.aggs) {
		start := len(st.aggs)
		st.aggs = append(st.aggs, c.aggs[id])
		it.Aggs = st.aggs[start:len(st.aggs):len(st.aggs)]
	}
	return c.emit(st, it)
}

// printa hands over the aggregations printa() prints: from the pass's
// snapshot under an aggrate, else as they are now. Those with entries
// count as printed (they are not printed again at exit).
func (c *Consumer) printa(st *recState, r program.Record, args []program.Record) error {
	start := len(st.aggs)
	for _, a := range args {
		if a.AggID < 0 {
			continue
		}
		if a.AggID >= len(c.aggs) {
			return fmt.Errorf("printa of unknown aggregation %d", a.AggID)
		}
		st.aggs = append(st.aggs, c.aggs[a.AggID])
	}
	if len(st.aggs) == start {
		if r.AggID < 0 || r.AggID >= len(c.aggs) {
			return fmt.Errorf("printa of unknown aggregation %d", r.AggID)
		}
		st.aggs = append(st.aggs, c.aggs[r.AggID])
	}
	aggs := st.aggs[start:len(st.aggs):len(st.aggs)]
	if c.set.AggRate <= 0 {
		for _, a := range aggs {
			if err := c.freshFor(a.Desc.ID); err != nil {
				return err
			}
		}
	}
	it := output.Item{Kind: program.ActPrinta, Aggs: aggs}
	if r.FormatID >= 0 {
		f, err := c.format(r.FormatID)
		if err != nil {
			return err
		}
		it.Format = f
	}
	if err := c.emit(st, it); err != nil {
		return err
	}
	printed := false
	for _, a := range aggs {
		printed = printed || a.Len() > 0
	}
	if printed {
		for _, a := range aggs {
			a.Printed = true
		}
	}
	return nil
}

// printfText formats the arguments of system() and freopen() as printf()
// would.
func (c *Consumer) printfText(st *recState, data []byte, r program.Record, args []program.Record) (output.Item, error) {
	f, err := c.format(r.FormatID)
	if err != nil {
		return output.Item{}, err
	}
	it := output.Item{Format: f, Args: c.args(st, data, args)}
	var b bytes.Buffer
	if err := c.fmt.Printf(&b, f, it.Args); err != nil {
		return it, err
	}
	it.Text = b.String()
	return it, nil
}

// system runs system()'s command with sh -c, as dtrace does with
// system(3), once the renderer has written out what the record printed
// before it, so that the command's output follows. Its exit status is
// ignored.
func (c *Consumer) system(st *recState, data []byte, r program.Record, args []program.Record) error {
	it, err := c.printfText(st, data, r, args)
	if err != nil {
		return err
	}
	it.Kind = program.ActSystem
	if err := c.emit(st, it); err != nil {
		return err
	}
	var out io.Writer = os.Stdout
	if o, ok := c.r.(output.Outputter); ok {
		out = o.Output()
	}
	sh := exec.Command("/bin/sh", "-c", it.Text)
	sh.Stdout, sh.Stderr = out, os.Stderr
	if c.cfg.Waiting != nil {
		c.cfg.Waiting(func() { _ = sh.Run() })
	} else {
		_ = sh.Run()
	}
	return nil
}

// freopen runs freopen(): the output that follows goes to the named
// file, opened for appending and created if missing; freopen("") goes
// back to the original output. A file that cannot be opened is a
// library-level error and the output stays where it was.
func (c *Consumer) freopen(st *recState, data []byte, r program.Record, args []program.Record) error {
	it, err := c.printfText(st, data, r, args)
	if err != nil {
		return err
	}
	it.Kind = program.ActFreopen
	if it.Text != "" {
		file, err := os.OpenFile(it.Text, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return c.liberr(fmt.Sprintf("couldn't freopen() \"%s\": %s", it.Text, errText(err)))
		}
		it.File = file
	}
	err = c.emit(st, it)
	c.closeReopened()
	c.reopened, c.reopenedName = it.File, it.Text
	return err
}

// errText is an error's errno text, as strerror words it.
func errText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if s := en.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// setopt applies setopt() as dtrace does: a bad option is a
// library-level error of the clause.
func (c *Consumer) setopt(st *recState, data []byte, r program.Record, args []program.Record) error {
	name := ""
	if r.FormatID >= 0 && r.FormatID < len(c.cfg.Spec.Formats) {
		name = c.cfg.Spec.Formats[r.FormatID]
	}
	val, hasVal := "", len(args) > 0
	if hasVal {
		if s, ok := value(data, args[0]).(program.String); ok {
			val = string(s)
		}
	}
	if c.cfg.Setopt == nil {
		return nil
	}
	set, err := c.cfg.Setopt(name, val, hasVal)
	if err != nil {
		shown := val
		if !hasVal {
			shown = "1"
		}
		// dtrace's message ends in a newline and its error handler adds
		// another.
		return c.liberr(fmt.Sprintf("couldn't set option \"%s\" to \"%s\": %v\n", name, shown, err))
	}
	c.set = set
	it := output.Item{Kind: program.ActSetopt, Text: name, Settings: &c.set}
	if hasVal {
		it.Args = c.args(st, data, args[:1])
	}
	return c.emit(st, it)
}
