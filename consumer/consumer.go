//go:build linux

package consumer

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
)

// Program is what the consumer needs of the loaded program: its maps
// and the probes it can fire from user space (END). *loader.Objects is
// one.
type Program interface {
	Map(name string) *ebpf.Map
	Has(probe uint32) bool
	Run(probe uint32, args []uint64) error
}

// Probes looks probes up by id; *provider.Registry is one.
type Probes interface {
	Probe(id uint32) *provider.Probe
}

// Config wires a Consumer to one loaded program.
type Config struct {
	Spec *program.Spec
	// EPID tells what an EPID stands for: the probe and the clause
	// (the loader's plan knows).
	EPID    func(epid uint32) (probe uint32, clause int, ok bool)
	Program Program
	Probes  Probes
	Buffers *Buffers
	// Waiting, when set, runs wait, system()'s wait for its command:
	// the caller may let other work that waits for the consumer's pass
	// (a process started by the command that dtrace holds) run meanwhile.
	Waiting func(wait func())
	// KeySizes holds, per aggregation, the D size of each integer key
	// (0 when not an integer): keys are stored 8 bytes wide but print
	// as their type.
	KeySizes [][]int
	// Settings are the options in effect at the start.
	Settings output.Settings
	// Setopt applies setopt(name[, value]) and returns the settings
	// then in effect; an error is worded for dtrace's message.
	Setopt func(name, value string, hasValue bool) (output.Settings, error)
	// Sym resolves addresses: aggregation keys of sym() and mod() & co
	// are reduced to their symbol or module with it.
	Sym format.Symbolizer
	// Target is the pid of $target (for formatting system() and
	// freopen() arguments).
	Target int
}

// Consumer decodes the records of one session and runs the library
// side of their actions, handing typed events to a renderer. It is not
// safe for concurrent use.
type Consumer struct {
	cfg  Config
	set  output.Settings
	fmt  *format.Printer
	aggs []*aggregate.Agg
	// r is the renderer of the current Work call.
	r output.Renderer

	// eps caches what each EPID stands for, indexed by EPID.
	eps []*epInfo
	// formats caches parsed format strings by id, types print()'s
	// types.
	formats []*format.Format
	types   map[*program.Type]*format.TypeInfo
	// recs holds the reused record events, by nesting depth (commit()
	// processes records inside a record); depth is the current one.
	recs  []*recState
	depth int
	// boxes holds the values records decode to.
	boxes boxes

	specs     map[uint32][]specRecord
	specBytes map[uint32]int
	specDrops uint64

	// cur is the record being processed, for library-level errors.
	cur *output.Record

	// dropsSeen holds the drop counters already reported.
	dropsSeen map[int]uint64
	// flowEvicted is the number of flow table entries evicted, counted
	// once tracing has stopped (flowCounted).
	flowEvicted uint64
	flowCounted bool

	// Under an aggrate, printa() prints the aggregations as read at the
	// start of the pass over the buffers, and they are read at most once
	// per aggrate (dtrace's snapshot). passPending is set while a pass
	// waits for data (it started at passStart); lastAgg is when the
	// snapshot was last due, lastSwitch when the last pass was due under
	// the switchrate; passes counts the passes done.
	passPending bool
	passStart   time.Time
	lastAgg     time.Time
	lastSwitch  time.Time
	passes      int
	// lastStatus is when the run state was last due to be looked at
	// under a statusrate.
	lastStatus time.Time

	// reopened is the file freopen() sends output to (nil: none),
	// reopenedName its name.
	reopened     *os.File
	reopenedName string
	// pcaps is pcap()'s state: its capture files and tshark.
	pcaps pcapState

	// snapshots counts the snapshots taken; pendingSnaps holds the
	// probes whose snapshot() is still to be taken.
	snapshots    int
	pendingSnaps []string

	// hasSnapshot is set when a clause calls snapshot().
	hasSnapshot bool

	// snapSeq holds, per aggregation, Buffers.Seq as it was when
	// printa() last read the aggregation: a printa() record that came
	// out of the kernel no later than that needs no new read (freshFor).
	snapSeq []uint64

	stopping   bool // Stop was called
	endPending bool // END is still to run (runEnd)
	quiescing  bool // Quiesce was called: recording ended, Stop is the caller's
	done       bool
	// lastPassEnd is when the last pass, after everything was
	// delivered, stops waiting under a switchrate (zero: not begun);
	// hurried cuts it short (Hurry). exitStop is set when the run state
	// (exit(), a full fill buffer) ended tracing rather than the caller;
	// records counts the records handled, recordsAtStop as it was when
	// the caller's Quiesce or Stop came (see beginLastPass).
	lastPassEnd   time.Time
	hurried       bool
	exitStop      bool
	records       uint64
	recordsAtStop uint64
	status        int
	sawExit       bool // an exit record set status
}

// checkProcessStart has the Go runtime make its one-time check of
// pidfd support now, before tracing starts, for a program that runs
// system(): the check clones a child that exits at once, and made at the
// first command, that child would be a process of dtrace's that exits
// while tracing (proc:::exit of a progenyof(pid) fires for it), where
// dtrace's system(3) forks only the command.
func checkProcessStart() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

// New returns a consumer for a loaded program.
func New(cfg Config) *Consumer {
	c := &Consumer{
		cfg:       cfg,
		set:       cfg.Settings,
		specs:     map[uint32][]specRecord{},
		specBytes: map[uint32]int{},
		types:     map[*program.Type]*format.TypeInfo{},
	}
	c.fmt = &format.Printer{
		Target:    cfg.Target,
		StrSize:   cfg.Settings.StrSize,
		RawBytes:  cfg.Settings.RawBytes,
		Sym:       cfg.Sym,
		NoResolve: cfg.Settings.NoResolve,
	}
	if cfg.Spec != nil {
		runs := false
		for _, cl := range cfg.Spec.Clauses {
			for _, s := range cl.Segments {
				for _, it := range s.Records {
					c.hasSnapshot = c.hasSnapshot || it.Action == program.ActSnapshot
					runs = runs || it.Action == program.ActSystem
				}
			}
		}
		if runs {
			checkProcessStart()
		}
		for _, a := range cfg.Spec.Aggs {
			d := aggregate.Desc(a.Desc)
			a := aggregate.New(&d)
			a.PerCPU = cfg.Settings.AggPerCPU
			c.aggs = append(c.aggs, a)
		}
		c.snapSeq = make([]uint64, len(c.aggs))
	}
	if cfg.Buffers != nil {
		cfg.Buffers.SetSlice(workSlice)
	}
	return c
}

// workSlice bounds the time one Work call spends delivering records, so
// that however fast they come its caller gets control back (to act on a
// signal, a process's exit) several times a second.
const workSlice = 100 * time.Millisecond

// ExitStatus is the value given to exit(), or 0. Without an exit record
// (a buffer too small for it dropped it) it is the status exit() left in
// dt_state.
func (c *Consumer) ExitStatus() int {
	if !c.sawExit && c.cfg.Program != nil {
		if m := c.cfg.Program.Map(abi.MapState); m != nil {
			var key uint32
			val := make([]byte, m.ValueSize())
			if m.Lookup(&key, &val) == nil && le.Uint32(val[abi.StateActivity:]) >= abi.ActivityDraining {
				return int(int32(le.Uint32(val[abi.StateExitStatus:])))
			}
		}
	}
	return c.status
}

// Reopened returns the file freopen() sends output to, or nil.
func (c *Consumer) Reopened() *os.File { return c.reopened }

// Done reports whether everything has been consumed after exit() or
// Stop.
func (c *Consumer) Done() bool { return c.done }

// Close closes the file freopen() opened, if any, and pcap()'s capture
// files; it waits for tshark to print the packets pcap() sent it.
func (c *Consumer) Close() error {
	return errors.Join(c.closePcap(), c.closeReopened())
}

func (c *Consumer) closeReopened() error {
	if c.reopened != nil {
		err := c.reopened.Close()
		c.reopened, c.reopenedName = nil, ""
		return err
	}
	return nil
}

// Work consumes what the buffers hold, waiting up to one switchrate for
// data, and hands the events to r. It reports done once exit() was
// called or Stop ran and everything has been consumed, and, under a
// switchrate, a last pass waited as dtrace-utils' does (beginLastPass).
func (c *Consumer) Work(r output.Renderer) (bool, error) {
	if c.done {
		return true, nil
	}
	if !c.lastPassEnd.IsZero() {
		return c.lastPass(), nil
	}
	c.r = r
	// Wait a short slice for data and look at the run state, so that an
	// exit() or a signal the caller handles between calls is acted on
	// within the slice rather than a switchrate later (the buffers wake
	// us only when half full).
	wait := c.set.SwitchRate
	if wait <= 0 || wait > 20*time.Millisecond {
		wait = 20 * time.Millisecond
	}
	bufs := c.cfg.Buffers
	for pass := 0; pass < 2; pass++ {
		if err := c.checkStatus(); err != nil {
			return false, err
		}
		if c.stopping || pass == 1 {
			break
		}
		// A switchrate set by the user (or setopt()) spaces the passes
		// that read the buffers; in between only the run state is
		// watched.
		if !c.passPending {
			now := time.Now()
			if rest := c.switchDue(now); rest > 0 {
				time.Sleep(min(wait, rest))
				continue
			}
			c.startPass(now)
		}
		if err := bufs.Poll(wait, c.record); err != nil {
			return false, err
		}
		if err := c.takeSnapshots(r); err != nil {
			return false, err
		}
		if err := c.idlePass(time.Now(), c.set.SwitchRate); err != nil {
			return false, err
		}
	}
	if c.stopping {
		// The records of probes that fired before END go out first, a
		// slice per call (so that the caller acts on a second signal
		// meanwhile); then END runs, and Flush delivers its records.
		if c.endPending || bufs.Pending() {
			if err := bufs.Drain(c.record); err != nil {
				return false, err
			}
			if bufs.Pending() {
				return false, r.Flush()
			}
		}
		if err := c.runEnd(); err != nil {
			return false, err
		}
		if err := c.takeSnapshots(r); err != nil {
			return false, err
		}
		if err := c.freshSnapshot(); err != nil {
			return false, err
		}
		if err := bufs.Flush(c.record); err != nil {
			return false, err
		}
		if err := c.reportDrops(); err != nil {
			return false, err
		}
		c.beginLastPass(time.Now())
	} else if err := c.reportDrops(); err != nil {
		return false, err
	}
	return c.done, r.Flush()
}

// checkStatus looks at the run state, at most once per statusrate when
// one is set (dtrace's dtrace_status() pacing; our default looks every
// pass): an exit() or a full fill buffer starts the ending.
func (c *Consumer) checkStatus() error {
	if c.stopping || c.set.StatusRate > 0 && !rateDue(&c.lastStatus, time.Now(), c.set.StatusRate) {
		return nil
	}
	act, err := c.activity()
	if err != nil {
		return err
	}
	if !c.quiescing && (act >= abi.ActivityDraining || c.cfg.Buffers.Filled()) {
		c.exitStop = true
		return c.Stop()
	}
	return nil
}

// Quiesce ends recording without ending the run: probes stop sending
// records (the state moves to DRAINING) while Work goes on delivering
// what the buffers hold, until Stop. dtrace(1M) stopped by a signal
// quiesces first, so that it can bound the time it spends on a backlog
// before END runs (see DropBacklog).
func (c *Consumer) Quiesce() error {
	if c.stopping || c.quiescing {
		return nil
	}
	c.quiescing = true
	c.recordsAtStop = c.records
	act, err := c.activity()
	if err != nil {
		return err
	}
	if act < abi.ActivityDraining {
		return c.SetActivity(abi.ActivityDraining)
	}
	return nil
}

// Pending reports whether records the buffers hold wait for Work.
func (c *Consumer) Pending() bool {
	return c.cfg.Buffers != nil && c.cfg.Buffers.Pending()
}

// DropBacklog drops what the buffers hold and Work has not delivered yet,
// counting it as drops, for a stop that may not wait for it (dtrace
// stopped by a signal under a flood of records).
func (c *Consumer) DropBacklog() {
	if c.cfg.Buffers != nil {
		c.cfg.Buffers.DiscardBacklog()
	}
}

// Stop ends tracing: it moves to DRAINING; Work then delivers what
// probes sent before and fires END. Work must be called until done.
func (c *Consumer) Stop() error {
	if c.stopping {
		return nil
	}
	c.stopping = true
	if !c.quiescing {
		c.recordsAtStop = c.records
	}
	act, err := c.activity()
	if err != nil {
		return err
	}
	if act != abi.ActivityDraining {
		if err := c.SetActivity(abi.ActivityDraining); err != nil {
			return err
		}
	}
	// Once tracing stops the aggregations are read afresh whatever the
	// aggrate. END runs in Work, once the records of the probes that
	// fired before it went out (in every CPU's order, as dtrace(1M)
	// consumes the CPU END fired on last).
	c.endPending = true
	return c.freshSnapshot()
}

// runEnd fires END, once Work delivered what came before it; under the
// fill policy its records may use the reserve.
func (c *Consumer) runEnd() error {
	if !c.endPending {
		return nil
	}
	c.endPending = false
	c.cfg.Buffers.Ending()
	if c.cfg.Program.Has(abi.ProbeEnd) {
		if err := c.cfg.Program.Run(abi.ProbeEnd, nil); err != nil {
			return fmt.Errorf("END: %w", err)
		}
	}
	return nil
}

// Aggregations reads every aggregation afresh and hands them to r, as
// at exit.
func (c *Consumer) Aggregations(r output.Renderer) error {
	if err := c.snapshotAll(); err != nil {
		return err
	}
	return r.Aggregations(c.aggs)
}

// FinalAggregations reads every aggregation afresh and returns them
// (valid until the consumer next runs), for a renderer's own printing.
func (c *Consumer) FinalAggregations() ([]*aggregate.Agg, error) {
	return c.aggs, c.snapshotAll()
}

func (c *Consumer) snapshotAll() error {
	for i := range c.aggs {
		if err := c.snapshot(i); err != nil {
			return err
		}
	}
	return nil
}

// activity reads dt_state's activity word.
func (c *Consumer) activity() (uint32, error) {
	m := c.cfg.Program.Map(abi.MapState)
	if m == nil {
		return 0, errors.New("no state map")
	}
	var key uint32
	val := make([]byte, m.ValueSize())
	if err := m.Lookup(&key, &val); err != nil {
		return 0, err
	}
	return le.Uint32(val[abi.StateActivity:]), nil
}

// SetActivity writes dt_state's activity word (abi.Activity*).
func (c *Consumer) SetActivity(act uint32) error {
	m := c.cfg.Program.Map(abi.MapState)
	if m == nil {
		return errors.New("no state map")
	}
	var key uint32
	val := make([]byte, m.ValueSize())
	if err := m.Lookup(&key, &val); err != nil {
		return err
	}
	le.PutUint32(val[abi.StateActivity:], act)
	return m.Update(&key, val, ebpf.UpdateExist)
}

// Snapshot writes what the buffers hold now to r, after a header
// (output.Snapshotter) naming its number, time and cause: under the
// ring policy the records kept on every CPU in time order, under the
// others what is buffered and not yet consumed. Tracing goes on; the
// records delivered leave the buffers.
func (c *Consumer) Snapshot(r output.Renderer, cause string) error {
	if c.done {
		return nil
	}
	c.r = r
	c.snapshots++
	if s, ok := r.(output.Snapshotter); ok {
		if err := s.Snapshot(&output.Snapshot{N: c.snapshots, Time: time.Now(), Cause: cause}); err != nil {
			return err
		}
	}
	if err := c.cfg.Buffers.Flush(c.record); err != nil {
		return err
	}
	if err := c.reportDrops(); err != nil {
		return err
	}
	return r.Flush()
}

// takeSnapshots takes the snapshots that snapshot() asked for.
func (c *Consumer) takeSnapshots(r output.Renderer) error {
	for len(c.pendingSnaps) > 0 {
		cause := c.pendingSnaps[0]
		c.pendingSnaps = c.pendingSnaps[1:]
		if err := c.Snapshot(r, cause); err != nil {
			return err
		}
	}
	return nil
}

// Trigger reports whether a record takes a snapshot (its snapshot()
// fired): under the ring policy such a record is handed over when
// drained rather than kept (BufferOptions.Trigger).
func (c *Consumer) Trigger(rec []byte) bool {
	if !c.hasSnapshot || len(rec) < abi.HdrSize {
		return false
	}
	ep, err := c.epid(le.Uint32(rec[abi.HdrEPID:]))
	if err != nil {
		return false
	}
	seg := le.Uint32(rec[abi.HdrSegment:])
	for _, s := range ep.segs {
		if s.Index != seg {
			continue
		}
		for _, it := range s.Records {
			if it.Action == program.ActSnapshot && int(it.Offset)+4 <= len(rec) && le.Uint32(rec[it.Offset:]) != 0 {
				return true
			}
		}
	}
	return false
}
