package codegen

import "github.com/dtrace-go/dtrace/dlang/syntax"

// Options are the D options that change generated code.
type Options struct {
	// StrSize is the size of string buffers (strsize), default 256.
	StrSize uint32
	// NSpec is the number of speculation buffers (nspec), default 1.
	NSpec uint32
	// DynVarSize bounds dt_tvars and dt_assoc entries (derived from
	// dynvarsize); default 65536 entries.
	DynVars uint32
	// FlowSize bounds the entries of each flow map: threads with a
	// flow, writes in flight, streams carrying flows (flowsize;
	// default 65536).
	FlowSize uint32
	// PcapSize is the pcapsize option: the bytes of a packet pcap()
	// records (0: DefaultPcapSize).
	PcapSize uint32
	// AggSize bounds entries per aggregation (default 65536).
	AggEntries uint32
	// AggSize is the aggsize option in bytes (0: unbounded). Entries
	// are charged AggSpec.ChargedSize; an aggregation that aggsize
	// bounds to fewer than aggCacheMinEntries entries gets no front
	// cache, which would hold entries beyond the bound.
	AggSize int64
	// Destructive allows destructive actions (-w).
	Destructive bool
	// MaxFrames is the maxframes option: stack() and ustack() record at
	// most this many frames (fewer asked are taken silently, as dtrace
	// does) and stackdepth/ustackdepth count at most this many. 0 means
	// the kernel's limit, 127.
	MaxFrames int64
	// UStackCFI makes ustack() and its kin walk user stacks by call-frame
	// information (unwind.go; x86-64, with MemberOffset for the VMA
	// fields) instead of bpf_get_stack's frame-pointer walk.
	UStackCFI bool
	// MemberOffset, if set, gives the byte offset of a member of a
	// struct of the running kernel. With task_struct.comm known, an
	// execname aggregation key is read from the task directly
	// (bpf_get_current_task_btf), which costs much less than
	// bpf_get_current_comm.
	MemberOffset func(structName, member string) (uint32, error) `json:"-"`
	// SourceText, if set, renders a position for the source annotation of
	// instructions (dtrace -S); the default prints the raw position.
	SourceText func(syntax.Pos) string `json:"-"`
	// ISA is the BPF instruction set version the target kernel accepts
	// (2, 3 or 4, as internal/kfeature probes it); 0 means 4. Below 4
	// no sign-extending moves or loads and no signed division are
	// emitted: shifts and unsigned division on magnitudes replace them.
	ISA int
	// SpecSize is the specsize option (0: unbounded): a clause whose
	// speculative record alone is larger ends at its speculate(),
	// counted as a speculative drop, as in dtrace-utils (what overflows
	// a speculation only with the records before it is dropped by the
	// consumer, the clause having run).
	SpecSize int64
	// Link is how kernel symbols are linked (the linkmode and
	// knodefs options): their addresses are compiled in, or, for those
	// the policy leaves to a link time this implementation does not
	// have, the reference is refused (D_ASRELO).
	Link SymbolLink
	// RecordFlow has every record carry the firing's flowid (its low
	// 32 bits, in the header's reserved word abi.HdrReserved): the
	// OTLP exporter's trace of a program with flow variables. It costs
	// a flow lookup per record, so it is set only then.
	RecordFlow bool
}

// SymbolLink says which kernel symbols' addresses may be compiled in.
type SymbolLink int

// Symbol link policies, after dtrace's linkmode option.
const (
	// LinkStatic compiles in every kernel symbol's address (linkmode
	// kernel and static, or knodefs).
	LinkStatic SymbolLink = iota
	// LinkPrimary refuses symbols of loadable modules (linkmode
	// primary): only vmlinux's are compiled in.
	LinkPrimary
	// LinkDynamic refuses every kernel symbol (linkmode dynamic).
	LinkDynamic
)

func (o *Options) defaults() {
	if o.StrSize == 0 {
		o.StrSize = 256
	}
	if o.NSpec == 0 {
		o.NSpec = 1
	}
	if o.DynVars == 0 {
		o.DynVars = 65536
	}
	if o.AggEntries == 0 {
		o.AggEntries = 65536
	}
	if o.FlowSize == 0 {
		o.FlowSize = 65536
	}
}
