package output

import (
	"os"
	"time"

	"github.com/dtrace-go/dtrace/aggregate"
	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// Probe identifies a probe: its id and its four names.
type Probe struct {
	ID                               uint32
	Provider, Module, Function, Name string
}

// String returns the probe's description, "provider:module:function:name".
func (p Probe) String() string {
	return p.Provider + ":" + p.Module + ":" + p.Function + ":" + p.Name
}

// Record is one record of a probe firing: the output of one clause, or of
// one straight-line run of its actions (a clause whose if/else branches
// record data sends one record per run). Its items are handed to
// Renderer.Item one by one between Begin and End.
type Record struct {
	// CPU is the CPU the probe fired on.
	CPU int
	// EPID is the enabled probe id: one clause on one probe.
	EPID uint32
	// Clause is the clause's index in the program, from 0.
	Clause int
	// Probe is the probe that fired; Known is false when the consumer
	// does not know it (its names are then empty).
	Probe Probe
	Known bool
	// First is set on the record that can start a firing's output:
	// dtrace(1M) prints the probe line ("CPU ID FUNCTION:NAME") there.
	First bool
	// Data is set when the record holds anything but commit() and
	// discard(): dtrace(1M) prints the probe line and the closing
	// newline only for those.
	Data bool
	// Spec is the speculation a committed record was held in, 0 for
	// a record that was not speculative.
	Spec uint32
	// Time is when the record was written (CLOCK_MONOTONIC
	// nanoseconds), PID and TID the process and thread that wrote it;
	// they are 0 unless records are stamped (dtrace.Config.Stamp, -x
	// oformat=perfetto); Time is also set under bufpolicy=ring.
	Time     uint64
	PID, TID int
	// Cgroup is the id of the cgroup of the thread that wrote it (0
	// unless records are stamped); ContainerName names it.
	Cgroup uint64
	// Flow is the flowid of the firing (the low 32 bits) when the
	// program records it (OTLP spans of a program with flow
	// variables), else 0.
	Flow uint64
	// Items holds the items handed to Item so far, in order; at End, all
	// of them. Like the Record, it is reused: copy what must be kept.
	Items []Item
}

// Item is one decoded item of a record. Which fields are set depends on
// Kind. Values are valid during the Renderer call that passes them (and,
// in Record.Items, until End returns); aggregations change as later
// actions run: copy what must be kept.
type Item struct {
	// Kind is the D action that made it (program.Act*): ActTrace
	// (trace(), and print() of a value without a printable type): Value;
	// ActPrintf: Format and Args; ActPrinta: Format (nil without one)
	// and Aggs, the aggregations as printa() shows them; ActPrint: Addr,
	// Type and Data, or with ByValue Type and Data; ActTracemem: Data;
	// ActStack (stack() and ustack()): Value, a program.Stack; ActSym
	// (sym(), func(), mod(), usym(), ufunc(), umod(), uaddr()): Value, a
	// program.Sym; ActExit: N, the status; ActSystem: Format, Args and
	// Text, the command, which the consumer runs after the Item call
	// returns with its output going to the renderer's Output (os.Stdout
	// without one), so a renderer must write out what it holds before
	// returning; ActFreopen: Format, Args, Text (the file name, empty
	// for the original output) and File; ActSetopt once applied: Text
	// (the name), Args (the value, none for setopt(name)) and Settings;
	// ActFtruncate: nothing (a file output is emptied);
	// ActClear: Aggs, cleared; ActTrunc: N entries kept and Aggs after
	// it; ActNormalize: N, the factor; ActDenormalize; ActCommit and
	// ActDiscard: N, the speculation (the records commit() held follow
	// as records of their own, Record.Spec set, before the next item).
	Kind program.Action
	// Value is the datum of trace(), stack(), ustack() and sym() & co.
	Value program.Value
	// Format is the parsed format of printf(), printa(), system() and
	// freopen().
	Format *format.Format
	// Args are the arguments of printf(), system() and freopen(), and
	// setopt()'s value.
	Args []program.Value
	// Aggs are the aggregations of printa() (in argument order), clear(),
	// trunc(), normalize() and denormalize().
	Aggs []*aggregate.Agg
	// Addr, Type and Data are print()'s pointer, the D type of what it
	// points to and the object's bytes; Data is also tracemem()'s bytes.
	// ByValue marks print() of a value that is not a pointer: Data is
	// the value itself and Addr is unused (format.PrintValue).
	Addr    uint64
	Type    *format.TypeInfo
	Data    []byte
	ByValue bool
	// N is exit()'s status, trunc()'s count, normalize()'s factor or
	// the speculation of commit() and discard().
	N int64
	// Text is system()'s command, freopen()'s file name or setopt()'s
	// option name.
	Text string
	// File is where freopen() sends output, nil for the original.
	File *os.File
	// Settings are the settings in effect after setopt().
	Settings *Settings
}

// Fault is a run-time fault of a clause (dtrace's ERROR probe fires for
// it): a bad address, a division by zero, an index out of range.
type Fault struct {
	// Probe is the probe whose clause faulted (Known false if unknown).
	Probe Probe
	Known bool
	// Clause is dtrace's statement number of the clause (program.Spec's
	// Stmt, the N of dt_clause_N); CPU where it ran.
	Clause int
	CPU    int
	// Code is the DTRACEFLT_* code, Name dtrace's words for it
	// ("invalid address").
	Code uint64
	Name string
	// Addr is the illegal value (the address, the index, ...).
	Addr uint64
	// PC is the BPF instruction that faulted, -1 when unknown.
	PC int64
}

// Error is a library-level error of a clause: an action the consumer
// could not carry out (setopt() of a bad option, a freopen() that could
// not open its file).
type Error struct {
	Probe Probe
	Known bool
	// Clause is dtrace's statement number of the clause (program.Spec's
	// Stmt).
	Clause int
	// Msg is the message in dtrace's words.
	Msg string
}

// DropKind says what was dropped.
type DropKind int

// Drop kinds. The first two are per CPU; the others are counted over all
// CPUs.
const (
	// DropPrincipal: records the principal buffer had no room for.
	DropPrincipal DropKind = iota
	// DropAggregation: aggregation updates that found the map full.
	DropAggregation
	// DropDynamic: dynamic variable (thread-local, associative array)
	// stores that found no room.
	DropDynamic
	// DropSpec: speculative records beyond specsize.
	DropSpec
	// DropSpecBusy: speculation() failed, every buffer busy.
	DropSpecBusy
	// DropSpecUnavail: speculation() failed, no buffer available.
	DropSpecUnavail
	// DropFlow: flow variables (beyond DTrace) that found their table
	// full (flowsize) and were lost.
	DropFlow
)

var dropTags = [...]string{"DTRACEDROP_PRINCIPAL", "DTRACEDROP_AGGREGATION", "DTRACEDROP_DYNAMIC",
	"DTRACEDROP_SPEC", "DTRACEDROP_SPECBUSY", "DTRACEDROP_SPECUNAVAIL", "DTRACEDROP_FLOW"}

// Tag returns dtrace's tag for the kind (DTRACEDROP_PRINCIPAL).
func (k DropKind) Tag() string {
	if k >= 0 && int(k) < len(dropTags) {
		return dropTags[k]
	}
	return "DTRACEDROP_UNKNOWN"
}

// PerCPU reports whether drops of this kind are counted per CPU.
func (k DropKind) PerCPU() bool { return k == DropPrincipal || k == DropAggregation }

// Drop counts what was lost since the last report.
type Drop struct {
	Kind DropKind
	// CPU is the CPU for per-CPU kinds, -1 for the others.
	CPU   int
	Count uint64
}

// Settings are the options that shape what is printed, as they stand;
// setopt() can change them while tracing (KindSetopt).
type Settings struct {
	Quiet      bool // quiet: no probe lines, trace() without padding
	FlowIndent bool // flowindent
	RawBytes   bool // rawbytes: every value in hex
	DropTags   bool // droptags: drop messages carry their tag
	StrSize    int  // strsize
	PrintSize  int  // printsize: print() cuts objects at this size
	// AggSort holds the aggsortkey, aggsortrev, aggsortkeypos and
	// aggsortpos options.
	AggSort aggregate.SortOptions
	// AggView holds the agghist, aggpack, aggzoom and encoding options.
	AggView aggregate.View
	// SpecSize is specsize: what one speculation may hold.
	SpecSize int64
	// SwitchRate and AggRate are the switchrate and aggrate options, 0
	// when not set (no limit).
	SwitchRate, AggRate time.Duration
	// NoResolve is the noresolve option: user addresses print
	// unresolved (format.Printer's NoResolve).
	NoResolve bool
	// StatusRate is the statusrate option, 0 when not set: how often
	// the consumer looks whether exit() was called.
	StatusRate time.Duration
	// AggPerCPU is the aggpercpu option: aggregations print each CPU's
	// value after the merged one, for every CPU in CPUs (the online
	// ones).
	AggPerCPU bool
	CPUs      []int
}

// Snapshot starts the output of a snapshot of the buffers (beyond
// DTrace: kill -USR1, snapshot()): the records it delivers follow.
type Snapshot struct {
	// N counts the snapshots of the run, from 1.
	N int
	// Time is when it was taken.
	Time time.Time
	// Cause is what took it: the probe that called snapshot() or
	// "signal USR1".
	Cause string
}
