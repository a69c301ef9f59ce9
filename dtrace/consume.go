//go:build linux

package dtrace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/provider"
)

// Record header offsets (codegen/doc.go).
const (
	hdrEPID    = 0
	hdrSpecID  = 4
	hdrSegment = 8
	hdrSize    = 16
)

// Fault record offsets (codegen's faultTail).
const (
	faultClause = 8  // u32 clause index
	faultProbe  = 12 // u32 probe id
	faultCode   = 16 // u64 fault code
	faultAddr   = 24 // u64 illegal value
	faultPC     = 32 // u64 BPF pc, or -1
)

// Fault codes, as DTrace numbers them (DTRACEFLT_*).
var faultNames = map[uint64]string{
	1:  "invalid address",
	2:  "invalid alignment",
	3:  "illegal operation",
	4:  "divide-by-zero",
	5:  "out of scratch space",
	6:  "invalid kernel access",
	7:  "invalid user access",
	8:  "tuple stack overflow",
	9:  "bad stack",
	10: "invalid size",
	11: "index out of bounds",
	12: "library-level fault",
}

// consumerState decodes records and runs the library side of actions.
type consumerState struct {
	h    *Handle
	out  io.Writer
	fmt  *format.Printer
	aggp *aggregate.Printer
	aggs []*aggregate.Agg
	// keySizes holds, per aggregation, the D size of each integer key:
	// keys are stored 8 bytes wide but print as their type.
	keySizes [][]int
	// formats caches parsed format strings by id.
	formats map[int]*format.Format
	// specs holds speculated records until commit or discard.
	specs map[uint32][]specRecord
	// specBytes is the size of what each speculation holds; specDrops
	// counts records refused for lack of specsize.
	specBytes map[uint32]int
	specDrops uint64
	err       error
	// curClause and curProbe describe the record being processed, for
	// library-level error messages.
	curClause int
	curProbe  *provider.Probe
	// dropsSeen holds the drop counters already reported.
	dropsSeen map[int]uint64
	// indent, lastProbe and lastClause track flowindent's call depth.
	indent     int
	lastProbe  uint32
	lastClause int
	// heading is set once the default output's heading was printed.
	heading bool

	// Under an aggrate, printa() prints the aggregations as read at the
	// start of the pass over the buffers, and they are read at most once
	// per aggrate (dtrace's snapshot). passPending is set while a pass
	// waits for data (it started at passStart); lastAgg is when the
	// snapshot was last due; passes counts the passes done.
	passPending bool
	passStart   time.Time
	lastAgg     time.Time
	passes      int

	// base is the writer the caller gave; reopened the file freopen()
	// sends output to instead (nil: none).
	base     io.Writer
	reopened *os.File
}

type specRecord struct {
	cpu  int
	data []byte
}

func newConsumerState(h *Handle) *consumerState {
	c := &consumerState{
		h:         h,
		formats:   map[int]*format.Format{},
		specs:     map[uint32][]specRecord{},
		specBytes: map[uint32]int{},
	}
	c.fmt = &format.Printer{
		Target:   h.conf.Target,
		StrSize:  int(h.opts.StrSize),
		RawBytes: h.opts.RawBytes,
		Sym:      h.sym,
	}
	c.aggp = &aggregate.Printer{Fmt: c.fmt, Sort: aggregate.SortOptions{
		Key:    h.opts.AggSortKey,
		Rev:    h.opts.AggSortRev,
		KeyPos: int(max(h.opts.AggSortKeyPos, 0)),
		Pos:    int(max(h.opts.AggSortPos, 0)),
	}}
	for _, a := range h.spec.Aggs {
		d := a.Desc
		c.aggs = append(c.aggs, aggregate.New(&d))
		var sizes []int
		if a.ID < len(h.info.Aggs) {
			for _, kt := range h.info.Aggs[a.ID].Keys {
				sizes = append(sizes, int(kt.Size()))
			}
		}
		c.keySizes = append(c.keySizes, sizes)
	}
	return c
}

// record handles one record from a CPU's buffer.
func (c *consumerState) record(cpu int, data []byte) error {
	if len(data) < hdrSize {
		return nil
	}
	if c.passPending {
		if err := c.endPass(time.Now()); err != nil {
			return err
		}
	}
	epid := binary.LittleEndian.Uint32(data[hdrEPID:])
	if epid == codegen.EPIDFault {
		return c.fault(data)
	}
	if spec := binary.LittleEndian.Uint32(data[hdrSpecID:]); spec != 0 {
		// Held until commit() or discard(); what does not fit in
		// specsize is a speculative drop.
		if c.specBytes[spec]+len(data) > int(c.h.opts.SpecSize) {
			c.specDrops++
			return nil
		}
		c.specBytes[spec] += len(data)
		c.specs[spec] = append(c.specs[spec], specRecord{cpu, bytes.Clone(data)})
		return nil
	}
	return c.process(cpu, data)
}

// process prints one (non-speculative or committed) record.
func (c *consumerState) process(cpu int, data []byte) error {
	epid := binary.LittleEndian.Uint32(data[hdrEPID:])
	ep, ok := c.h.objs.Plan().EPID(epid)
	if !ok {
		return fmt.Errorf("record with unknown EPID %d", epid)
	}
	cl := c.h.spec.Clauses[ep.Clause]
	seg := binary.LittleEndian.Uint32(data[hdrSegment:])
	var rs *codegen.RecordSpec
	for _, s := range cl.Segments {
		if s.Index == seg {
			rs = s
			break
		}
	}
	if rs == nil {
		return fmt.Errorf("record with unknown segment %d of clause %d", seg, ep.Clause)
	}
	probe := c.h.reg.Probe(ep.ProbeID)
	c.curClause, c.curProbe = ep.Clause, probe
	quiet := c.h.opts.Quiet
	recording := dataRecording(rs.Records)
	var b bytes.Buffer
	flow := c.h.opts.FlowIndent
	if recording && rs.First && (flow || !quiet) {
		c.probeLine(&b, cpu, probe, ep.Clause)
	}
	recs := rs.Records
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if int(r.Offset+r.Size) > len(data) {
			return fmt.Errorf("record item beyond record end")
		}
		args := recs[i+1 : min(i+1+r.NArgs, len(recs))]
		i += r.NArgs
		if err := c.action(&b, cpu, data, r, args); err != nil {
			return err
		}
	}
	if recording && !quiet {
		b.WriteByte('\n')
	}
	_, err := c.out.Write(b.Bytes())
	return err
}

// dataRecording reports whether a record prints anything (a clause with
// only commit/discard does not print the probe line).
func dataRecording(recs []codegen.Record) bool {
	if len(recs) == 0 {
		return true
	}
	for _, r := range recs {
		switch r.Action {
		case codegen.ActCommit, codegen.ActDiscard, codegen.ActArg:
		default:
			return true
		}
	}
	return false
}

// probeLine prints the default output's heading (once) and the probe
// column of a record: "CPU ID FUNCTION:NAME", or with flowindent the
// function indented by call depth with "->" and "<-" marks (printed even
// when quiet, as dtrace does).
func (c *consumerState) probeLine(b *bytes.Buffer, cpu int, p *provider.Probe, clause int) {
	testing := c.h.conf.Testing
	flow := c.h.opts.FlowIndent
	if !c.heading {
		c.heading = true
		switch {
		case flow && testing:
			fmt.Fprintf(b, "%-41s\n", "FUNCTION")
		case flow:
			fmt.Fprintf(b, "%3s %-41s\n", "CPU", "FUNCTION")
		case testing:
			fmt.Fprintf(b, "%32s\n", "FUNCTION:NAME")
		default:
			fmt.Fprintf(b, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME")
		}
	}
	var fn, name, prov string
	var id uint32
	if p != nil {
		fn, name, prov, id = p.Function, p.Name, p.Provider, p.ID
	}
	if !flow {
		if testing {
			fmt.Fprintf(b, "%32s ", fn+":"+name)
		} else {
			fmt.Fprintf(b, "%3d %6d %32s ", cpu, id, fn+":"+name)
		}
		return
	}
	kind, prefix := flowKind(prov, name)
	if kind == flowEntry && clause != c.lastClause && id == c.lastProbe {
		kind, prefix = flowNone, "| "
	}
	if kind == flowReturn && c.indent > 0 {
		c.indent -= 2
	}
	col := strings.Repeat(" ", c.indent) + prefix + fn
	if kind == flowNone {
		col += ":" + name
	}
	if testing {
		fmt.Fprintf(b, "%-41s ", col)
	} else {
		fmt.Fprintf(b, "%3d %-41s ", cpu, col)
	}
	if kind == flowEntry {
		c.indent += 2
	}
	c.lastProbe, c.lastClause = id, clause
}

// Kinds of probes for flowindent.
const (
	flowNone = iota
	flowEntry
	flowReturn
)

// flowKind classifies a probe name: "entry" or "...-entry" enters,
// "return" or "...-return" returns; syscalls use double arrows.
func flowKind(prov, name string) (int, string) {
	sys := prov == "syscall"
	switch {
	case name == "entry" || strings.HasSuffix(name, "-entry"):
		if sys {
			return flowEntry, " => "
		}
		return flowEntry, " -> "
	case name == "return" || strings.HasSuffix(name, "-return"):
		if sys {
			return flowReturn, " <= "
		}
		return flowReturn, " <- "
	}
	return flowNone, "| "
}

// value decodes one record item.
func value(data []byte, r codegen.Record) format.Value {
	buf := data[r.Offset : r.Offset+r.Size]
	switch r.Kind {
	case codegen.KindSigned, codegen.KindUnsigned:
		var v uint64
		switch r.Size {
		case 1:
			v = uint64(buf[0])
		case 2:
			v = uint64(binary.LittleEndian.Uint16(buf))
		case 4:
			v = uint64(binary.LittleEndian.Uint32(buf))
		default:
			v = binary.LittleEndian.Uint64(buf)
		}
		return format.Int{Bits: v, Size: int(r.Size), Signed: r.Kind == codegen.KindSigned}
	case codegen.KindString:
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			buf = buf[:i]
		}
		return format.String(buf)
	case codegen.KindStack, codegen.KindUStack:
		var st format.Stack
		if r.Kind == codegen.KindUStack && len(buf) >= 8 {
			st.User, st.PID = true, int(binary.LittleEndian.Uint64(buf))
			buf = buf[8:]
		}
		for i := 0; i+8 <= len(buf); i += 8 {
			pc := binary.LittleEndian.Uint64(buf[i:])
			if pc == 0 {
				break
			}
			st.PCs = append(st.PCs, pc)
		}
		return st
	case codegen.KindSym, codegen.KindMod:
		kind := format.KernelSym
		if r.Kind == codegen.KindMod {
			kind = format.KernelMod
		}
		return format.Sym{Addr: binary.LittleEndian.Uint64(buf), Kind: kind}
	case codegen.KindUSym, codegen.KindUMod, codegen.KindUAddr:
		// The tgid of the process the address belongs to, then the
		// address.
		kind := map[codegen.ValueKind]format.SymKind{codegen.KindUSym: format.UserSym,
			codegen.KindUMod: format.UserMod, codegen.KindUAddr: format.UserAddr}[r.Kind]
		return format.Sym{PID: int(binary.LittleEndian.Uint64(buf)), Addr: binary.LittleEndian.Uint64(buf[8:]), Kind: kind}
	}
	return format.Bytes{Data: bytes.Clone(buf)}
}

func u64(data []byte, off uint32) uint64 {
	if int(off)+8 > len(data) {
		return 0
	}
	return binary.LittleEndian.Uint64(data[off:])
}

// format returns the parsed format string id.
func (c *consumerState) format(id int) (*format.Format, error) {
	if f, ok := c.formats[id]; ok {
		return f, nil
	}
	if id < 0 || id >= len(c.h.spec.Formats) {
		return nil, fmt.Errorf("bad format id %d", id)
	}
	f, err := format.Parse(c.h.spec.Formats[id])
	if err != nil {
		return nil, err
	}
	c.formats[id] = f
	return f, nil
}

// action runs one record item.
func (c *consumerState) action(b *bytes.Buffer, cpu int, data []byte, r codegen.Record, args []codegen.Record) error {
	quiet := c.h.opts.Quiet
	switch r.Action {
	case codegen.ActTrace:
		return c.fmt.Trace(b, value(data, r), quiet)
	case codegen.ActPrint:
		if r.Type == nil {
			return c.fmt.Trace(b, value(data, r), quiet)
		}
		addr := binary.LittleEndian.Uint64(data[r.Offset:])
		obj := data[r.Offset+8 : r.Offset+r.Size]
		return c.fmt.PrintType(b, addr, printTypeInfo(r.Type, 0), obj, int(c.h.opts.PrintSize))
	case codegen.ActTracemem:
		return format.Tracemem(b, data[r.Offset:r.Offset+r.Size])
	case codegen.ActPrintf:
		return c.printf(b, data, r, args)
	case codegen.ActSystem:
		return c.system(b, data, r, args)
	case codegen.ActFreopen:
		return c.freopen(b, data, r, args)
	case codegen.ActExit:
		c.h.status = int(int32(binary.LittleEndian.Uint32(data[r.Offset:])))
	case codegen.ActStack, codegen.ActUStack:
		return c.fmt.PrintStack(b, value(data, r).(format.Stack))
	case codegen.ActPrinta:
		return c.printa(b, r, data, args)
	case codegen.ActClear:
		return c.clear(r.AggID)
	case codegen.ActTrunc:
		n := int64(0)
		if len(args) > 0 {
			n = int64(u64(data, args[0].Offset))
		}
		return c.trunc(r.AggID, n)
	case codegen.ActNormalize:
		if r.AggID >= 0 && r.AggID < len(c.aggs) && len(args) > 0 {
			c.aggs[r.AggID].Normalize(u64(data, args[0].Offset))
		}
	case codegen.ActDenormalize:
		if r.AggID >= 0 && r.AggID < len(c.aggs) {
			c.aggs[r.AggID].Denormalize()
		}
	case codegen.ActSetopt:
		name := ""
		if r.FormatID >= 0 && r.FormatID < len(c.h.spec.Formats) {
			name = c.h.spec.Formats[r.FormatID]
		}
		val := ""
		if len(args) > 0 {
			if s, ok := value(data, args[0]).(format.String); ok {
				val = string(s)
			}
		}
		c.setopt(name, val, len(args) > 0)
	case codegen.ActCommit, codegen.ActDiscard:
		id := uint32(u64(data, r.Offset))
		recs := c.specs[id]
		delete(c.specs, id)
		delete(c.specBytes, id)
		if r.Action == codegen.ActCommit {
			// Flush what was printed so far so that committed output
			// follows it.
			if _, err := c.out.Write(b.Bytes()); err != nil {
				return err
			}
			b.Reset()
			for _, sr := range recs {
				if err := c.process(sr.cpu, sr.data); err != nil {
					return err
				}
			}
		}
	case codegen.ActSym, codegen.ActMod, codegen.ActUSym, codegen.ActUMod:
		return c.fmt.Trace(b, value(data, r), quiet)
	}
	return nil
}

// setopt applies setopt() as dtrace does: a bad option is a
// library-level error of the clause.
func (c *consumerState) setopt(name, val string, hasVal bool) {
	if err := c.h.opts.CheckSetopt(name, val, hasVal); err != nil {
		shown := val
		if !hasVal {
			shown = "1"
		}
		// dtrace's message ends in a newline and its error handler adds
		// another.
		c.liberr(fmt.Sprintf("couldn't set option \"%s\" to \"%s\": %v\n", name, shown, err))
		return
	}
	if hasVal {
		_ = c.h.opts.SetValue(name, val)
	} else {
		_ = c.h.opts.Set(name, "")
	}
	c.aggp.Sort = aggregate.SortOptions{
		Key:    c.h.opts.AggSortKey,
		Rev:    c.h.opts.AggSortRev,
		KeyPos: int(max(c.h.opts.AggSortKeyPos, 0)),
		Pos:    int(max(c.h.opts.AggSortPos, 0)),
	}

}

// liberr reports a library-level fault of the record being processed.
func (c *consumerState) liberr(msg string) {
	pdesc := ":::"
	id := uint32(0)
	if c.curProbe != nil {
		pdesc, id = c.curProbe.String(), c.curProbe.ID
	}
	fmt.Fprintf(c.h.conf.Stderr, "dtrace: error in dt_clause_%d for probe ID %d (%s): %s\n", c.curClause, id, pdesc, msg)
}

// fault prints a fault record as dtrace's default error handler does.
func (c *consumerState) fault(data []byte) error {
	prid := binary.LittleEndian.Uint32(data[faultProbe:])
	clause := binary.LittleEndian.Uint32(data[faultClause:])
	pc := int64(u64(data, faultPC))
	code := u64(data, faultCode)
	addr := u64(data, faultAddr)
	name := faultNames[code]
	if name == "" {
		name = "unknown fault"
	}
	details := ""
	switch code {
	case 1:
		if int64(addr) != -1 {
			details = fmt.Sprintf(" (0x%x)", addr)
		}
	case 2, 9, 10:
		details = fmt.Sprintf(" (0x%x)", addr)
	case 11:
		details = fmt.Sprintf(" (%d)", int64(addr))
	}
	where := ""
	if pc != -1 {
		where = fmt.Sprintf(" at BPF pc %d", pc)
	}
	pdesc := "::::"
	if p := c.h.reg.Probe(prid); p != nil {
		pdesc = p.String()
	}
	_, err := fmt.Fprintf(c.h.conf.Stderr, "dtrace: error in dt_clause_%d for probe ID %d (%s): %s%s%s\n",
		clause, prid, pdesc, name, details, where)
	return err
}

// Counters in dt_cpustate (codegen's CPU* offsets) with dtrace's words
// for them, in the order dtrace reports them.
var statusDrops = []struct {
	off       int
	tag, what string
	suffix    string
}{
	{codegen.CPUDynVarDrops, "DTRACEDROP_DYNAMIC", "dynamic variable drop", ""},
	{codegen.CPUSpecDrops, "DTRACEDROP_SPEC", "speculative drop", ""},
	{codegen.CPUSpecBusy, "DTRACEDROP_SPECBUSY", "failed speculation", " (available buffer(s) still busy)"},
	{codegen.CPUSpecUnavail, "DTRACEDROP_SPECUNAVAIL", "failed speculation", " (no speculative buffer available)"},
}

// reportDrops prints the drops counted since the last report: principal
// buffer losses per CPU, aggregation drops per CPU and the global
// counters of dt_cpustate.
func (c *consumerState) reportDrops() {
	tags := c.h.opts.DropTags
	for _, d := range c.h.bufs.Drops() {
		fmt.Fprintf(c.h.conf.Stderr, "dtrace: %s\n", d.Message(tags))
	}
	m := c.h.objs.Map("dt_cpustate")
	if m == nil {
		return
	}
	var key uint32
	var per [][]byte
	if err := m.Lookup(&key, &per); err != nil {
		return
	}
	if c.dropsSeen == nil {
		c.dropsSeen = map[int]uint64{}
	}
	for cpu, v := range per {
		n := u64(v, codegen.CPUAggDrops)
		k := -1 - cpu
		if n > c.dropsSeen[k] {
			d := consumer.Drop{CPU: cpu, Kind: consumer.DropAggregation, Count: n - c.dropsSeen[k]}
			fmt.Fprintf(c.h.conf.Stderr, "dtrace: %s\n", d.Message(tags))
			c.dropsSeen[k] = n
		}
	}
	for _, sd := range statusDrops {
		var total uint64
		for _, v := range per {
			total += u64(v, uint32(sd.off))
		}
		if sd.off == codegen.CPUSpecDrops {
			total += c.specDrops
		}
		old := c.dropsSeen[sd.off]
		if total <= old {
			continue
		}
		c.dropsSeen[sd.off] = total
		n := total - old
		msg := ""
		if tags {
			msg = "[" + sd.tag + "] "
		}
		plural := ""
		if n > 1 {
			plural = "s"
		}
		msg += fmt.Sprintf("%d %s%s%s", n, sd.what, plural, sd.suffix)
		if len(msg) > 79 {
			// dtrace builds the message in an 80-byte buffer; the cut
			// message then gets the error text of the last errno.
			msg = msg[:79] + ": No such process"
		}
		fmt.Fprintf(c.h.conf.Stderr, "dtrace: %s\n", msg)
	}
}

// PrintAggregations prints, at exit, the aggregations printa() did not.
// dtrace(1M) calls it after its final newline.
func (h *Handle) PrintAggregations(w io.Writer) error {
	if h.cons == nil {
		return nil
	}
	return h.cons.printAggregations(w)
}

func (c *consumerState) printAggregations(w io.Writer) error {
	for i := range c.aggs {
		if err := c.snapshot(i); err != nil {
			return err
		}
	}
	return c.aggp.PrintAll(w, c.aggs)
}

// startPass begins a pass over the buffers: it ends when the first
// record comes or, without data, after the switchrate (endPass).
func (c *consumerState) startPass(now time.Time) {
	c.passPending, c.passStart = true, now
}

// idlePass ends a pass that found no data once it waited a switchrate
// (dtrace waits a second when none is set).
func (c *consumerState) idlePass(now time.Time, switchRate time.Duration) error {
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
func (c *consumerState) endPass(now time.Time) error {
	c.passPending = false
	err := c.refresh(now)
	c.passes++
	if c.passes == 1 {
		c.lastAgg = time.Time{}
		c.h.lastSwitch = time.Time{}
	}
	return err
}

// refresh reads every aggregation when a snapshot is due under the
// aggrate, keeping to the rate's grid. Without an aggrate it does
// nothing: printa() then reads the aggregation it prints.
func (c *consumerState) refresh(now time.Time) error {
	d := c.h.rate("aggrate")
	if d <= 0 || !rateDue(&c.lastAgg, now, d) {
		return nil
	}
	for id := range c.aggs {
		if err := c.snapshot(id); err != nil {
			return err
		}
	}
	return nil
}

// freshSnapshot reads the aggregations now whatever the aggrate, as
// dtrace does once tracing stopped.
func (c *consumerState) freshSnapshot() error {
	c.passPending = false
	c.lastAgg = time.Time{}
	return c.refresh(time.Now())
}

// printa prints an aggregation now: from the pass's snapshot under an
// aggrate, else as it is now.
func (c *consumerState) printa(b *bytes.Buffer, r codegen.Record, data []byte, args []codegen.Record) error {
	var ids []int
	for _, a := range args {
		if a.AggID >= 0 {
			ids = append(ids, a.AggID)
		}
	}
	if len(ids) == 0 {
		ids = []int{r.AggID}
	}
	var aggs []*aggregate.Agg
	for _, id := range ids {
		if id < 0 || id >= len(c.aggs) {
			return fmt.Errorf("printa of unknown aggregation %d", id)
		}
		if c.h.rate("aggrate") <= 0 {
			if err := c.snapshot(id); err != nil {
				return err
			}
		}
		aggs = append(aggs, c.aggs[id])
	}
	var f *format.Format
	if r.FormatID >= 0 {
		var err error
		if f, err = c.format(r.FormatID); err != nil {
			return err
		}
	}
	return c.aggp.Printa(b, f, aggs...)
}

// snapshot reads aggregation id from its per-CPU map into c.aggs[id].
func (c *consumerState) snapshot(id int) error {
	as := c.h.spec.Aggs[id]
	a := c.aggs[id]
	m := c.h.objs.Map(as.Map)
	if m == nil {
		return fmt.Errorf("no map for aggregation %s", as.Name)
	}
	a.BeginSnapshot()
	key := make([]byte, m.KeySize())
	var vals [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		kv := c.decodeKey(id, key)
		for _, v := range vals {
			a.Add(kv, valueSlots(v))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	// Entries in the front cache (codegen/aggcache.go) add to the map's.
	return c.eachCached(id, func(_ uint32, _ int, slot []byte) bool {
		a.Add(c.decodeKey(id, slot[as.CacheKeyOff():as.CacheValueOff()]), valueSlots(slot[as.CacheValueOff():]))
		return false
	})
}

// valueSlots decodes an aggregation value into its u64 slots.
func valueSlots(v []byte) []int64 {
	slots := make([]int64, len(v)/8)
	for i := range slots {
		slots[i] = int64(binary.LittleEndian.Uint64(v[i*8:]))
	}
	return slots
}

// eachCached calls fn for every claimed slot of aggregation id's front
// cache, per CPU; where fn returns true (it changed the slot), the slots
// of that index are written back.
func (c *consumerState) eachCached(id int, fn func(idx uint32, cpu int, slot []byte) bool) error {
	as := c.h.spec.Aggs[id]
	if as.Cache == "" {
		return nil
	}
	m := c.h.objs.Map(as.Cache)
	if m == nil {
		return fmt.Errorf("no cache map for aggregation %s", as.Name)
	}
	var vals [][]byte
	for idx := uint32(0); idx < as.CacheSlots; idx++ {
		if err := m.Lookup(idx, &vals); err != nil {
			return fmt.Errorf("aggregation %s cache: %w", as.Name, err)
		}
		changed := false
		for cpu, v := range vals {
			if binary.LittleEndian.Uint64(v) != 0 && fn(idx, cpu, v) {
				changed = true
			}
		}
		if changed {
			if err := m.Update(idx, vals, ebpf.UpdateExist); err != nil {
				return fmt.Errorf("aggregation %s cache: %w", as.Name, err)
			}
		}
	}
	return nil
}

// decodeKey turns aggregation id's map key into the tuple of values.
func (c *consumerState) decodeKey(id int, key []byte) []format.Value {
	recs := c.h.spec.Aggs[id].Keys
	sizes := c.keySizes[id]
	out := make([]format.Value, 0, len(recs))
	for i, r := range recs {
		v := value(key, r)
		if iv, ok := v.(format.Int); ok && i < len(sizes) && sizes[i] > 0 && sizes[i] < iv.Size {
			iv.Size = sizes[i]
			v = iv
		}
		out = append(out, c.fmt.ReduceKey(v))
	}
	return out
}

// clear zeroes an aggregation's values in the kernel.
func (c *consumerState) clear(id int) error {
	if id < 0 || id >= len(c.aggs) {
		return nil
	}
	m := c.h.objs.Map(c.h.spec.Aggs[id].Map)
	key := make([]byte, m.KeySize())
	var keys [][]byte
	var vals [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		keys = append(keys, bytes.Clone(key))
	}
	for _, k := range keys {
		var cur [][]byte
		if err := m.Lookup(k, &cur); err != nil {
			continue
		}
		for i := range cur {
			clear(cur[i])
		}
		_ = m.Update(k, cur, 0)
	}
	// Cached entries keep their keys and lose their values, as the
	// map's do.
	as := c.h.spec.Aggs[id]
	_ = c.eachCached(id, func(_ uint32, _ int, slot []byte) bool {
		clear(slot[as.CacheValueOff():])
		return true
	})
	c.aggs[id].Clear()
	return nil
}

// trunc keeps the top n entries (bottom -n; none for 0).
func (c *consumerState) trunc(id int, n int64) error {
	if id < 0 || id >= len(c.aggs) {
		return nil
	}
	if err := c.snapshot(id); err != nil {
		return err
	}
	as := c.h.spec.Aggs[id]
	m := c.h.objs.Map(as.Map)
	gone := c.aggs[id].Trunc(n)
	if len(gone) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, e := range gone {
		want[keyText(e.Key)] = true
	}
	key := make([]byte, m.KeySize())
	var vals [][]byte
	var del [][]byte
	it := m.Iterate()
	for it.Next(&key, &vals) {
		if want[keyText(c.decodeKey(id, key))] {
			del = append(del, bytes.Clone(key))
		}
	}
	for _, k := range del {
		_ = m.Delete(k)
	}
	// A truncated entry's cache slot is freed for any key.
	return c.eachCached(id, func(_ uint32, _ int, slot []byte) bool {
		if !want[keyText(c.decodeKey(id, slot[as.CacheKeyOff():as.CacheValueOff()]))] {
			return false
		}
		clear(slot)
		return true
	})
}

func keyText(k []format.Value) string {
	var b strings.Builder
	for _, v := range k {
		fmt.Fprintf(&b, "%#v|", v)
	}
	return b.String()
}

// printTypeInfo describes a D type for format.PrintType: the walk sees
// members, offsets, bit-fields, enums and array elements. bits is the
// width of a bit-field member of type t (0: none). Pointers are leaves,
// so the walk ends: an object cannot contain itself.
func printTypeInfo(t *codegen.Type, bits uint32) *format.TypeInfo {
	ti := &format.TypeInfo{Name: t.Name, Size: int(t.Size), Bits: int(bits)}
	switch t.Kind {
	case codegen.TInt:
		switch {
		case t.Float:
			ti.Kind = format.TypeOther
		case t.Enum != nil:
			ti.Kind = format.TypeEnum
			for _, e := range t.Enum {
				ti.Enum = append(ti.Enum, format.EnumConst{Name: e.Name, Value: e.Value})
			}
		default:
			ti.Kind, ti.Signed, ti.Char = format.TypeInt, t.Signed, t.Char
		}
	case codegen.TPointer:
		ti.Kind = format.TypePointer
	case codegen.TStruct:
		ti.Kind = format.TypeStruct
		if t.Union {
			ti.Kind = format.TypeUnion
		}
		for _, f := range t.Fields {
			ti.Members = append(ti.Members, format.Member{
				Name:   f.Name,
				Offset: int(f.Offset*8 + f.BitOff),
				Type:   printTypeInfo(f.Type, f.BitSize),
			})
		}
	case codegen.TArray:
		ti.Kind, ti.Len = format.TypeArray, int(t.Len)
		if t.Elem != nil {
			ti.Elem = printTypeInfo(t.Elem, 0)
		}
	default:
		ti.Kind = format.TypeOther
	}
	return ti
}

// printf formats a printf-style record (printf(), and the argument
// strings of system() and freopen()) into b.
func (c *consumerState) printf(b *bytes.Buffer, data []byte, r codegen.Record, args []codegen.Record) error {
	f, err := c.format(r.FormatID)
	if err != nil {
		return err
	}
	vals := make([]format.Value, len(args))
	for i, a := range args {
		vals[i] = value(data, a)
	}
	return c.fmt.Printf(b, f, vals)
}

// flushRecord writes what the record printed so far to the output, so
// that what an action does outside the buffer (a command's output, a
// switch of file) comes after it.
func (c *consumerState) flushRecord(b *bytes.Buffer) error {
	if _, err := c.out.Write(b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	return nil
}
