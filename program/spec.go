package program

import "github.com/cilium/ebpf/asm"

// Spec is the deterministic output of code generation for one D program.
// It depends only on the program text and options; everything that depends
// on the running kernel (map fds, CPU count, probe ids) is resolved by the
// loader when objects are created.
type Spec struct {
	// Maps lists every map the clauses reference, by name.
	Maps []MapSpec
	// Clauses holds one entry per clause (ECB) in program order.
	Clauses []*ClauseSpec
	// Funcs holds shared BPF subprograms (the ERROR dispatcher dt_error,
	// ...) that clause bodies call by symbol; the first instruction of each
	// carries its symbol. The loader appends the ones a program references.
	Funcs []asm.Instructions
	// Layout describes the per-CPU scratch area; see doc.go.
	Layout ScratchLayout
	// Aggs describes every aggregation, indexed by AggID.
	Aggs []*AggSpec
	// Formats holds printf/printa format strings, indexed by FormatID.
	Formats []string
	// GVarsSize is the value size of dt_gvars.
	GVarsSize uint32
	// GlobalOffsets and LocalOffsets give, by variable ID, where global
	// variables lie in dt_gvars and clause-local ones in the scratch
	// area (from Layout.Temps); -S shows them.
	GlobalOffsets, LocalOffsets map[int]uint32
	// Charged holds what dtrace-utils charges a dynamic variable and an
	// aggregation entry against dynvarsize and aggsize (see Charges).
	Charged Charges
}

// Charges are the sizes dtrace-utils sizes its dynamic variable and
// aggregation maps by: each holds size / (Tuple + DynVar) or
// size / (Tuple + AggData) entries, and an enabling where none fits is
// refused ("Enabling exceeds size of buffer").
type Charges struct {
	// Tuple is the largest tuple of the program, associative array
	// keys and aggregation keys alike: a 4-byte variable id, the items
	// (integers in their size and alignment, strings strsize+1 bytes)
	// and an 8-byte thread key. 0 when there is none.
	Tuple uint32
	// DynVar is the largest thread-local variable or associative array
	// value, in its D size; 0 when the program has none.
	DynVar uint32
	// AggData is the largest aggregation value with its 8-byte
	// counter; 0 when the program aggregates nothing.
	AggData uint32
}

// MapKind is the kind of a BPF map in a Spec.
type MapKind int

// Map kinds used by generated code.
const (
	MapArray MapKind = iota
	MapPerCPUArray
	MapHash
	MapPerCPUHash
	MapPerfEventArray
	MapRingBuf
	// MapLRUHash is a hash that evicts its least recently used entry
	// to make room for a new one (the flow tables).
	MapLRUHash
	// MapArrayOfMaps is an array of maps whose inner maps are arrays of
	// InnerValueSize-byte values, each of its own size (the user-stack
	// unwinder's tables), or, when Inner is set, the maps Inner names.
	MapArrayOfMaps
)

// MapSpec describes one map. MaxEntries of 0 on an array or perf event
// array means "one per possible CPU", filled in by the loader.
type MapSpec struct {
	Name       string
	Kind       MapKind
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
	// InnerValueSize is the value size of a MapArrayOfMaps's inner
	// arrays.
	InnerValueSize uint32
	// Inner names the maps a MapArrayOfMaps holds at indices 0, 1, ...,
	// maps of the Spec of kind InnerKind and of InnerKeySize and
	// InnerValueSize (their sizes may differ); the loader fills it once
	// they are made.
	Inner        []string
	InnerKind    MapKind
	InnerKeySize uint32
}

// Stmt returns dtrace's statement number of clause i: dtrace makes a
// statement of each probe description of a clause, numbered from 0 in
// program order, and names a statement's function dt_clause_N by it in
// its messages and as the ERROR probe's arg2. A clause of several
// descriptions is one function here; its number is that of its first
// description.
func (s *Spec) Stmt(i int) int {
	i = min(i, len(s.Clauses))
	return Stmts(i, func(j int) int { return len(s.Clauses[j].Probes) })[i]
}

// UserAddresses reports whether a record or aggregation key of the
// program holds user addresses that the consumer names from the objects
// a process maps (ustack(), jstack(), usym(), ufunc(), umod(), uaddr()).
// A format's %A conversion names one too: the format package tells those.
func (s *Spec) UserAddresses() bool {
	user := func(rs []Record) bool {
		for _, r := range rs {
			if r.Kind == KindUStack || r.Kind >= KindUSym && r.Kind <= KindUAddr {
				return true
			}
		}
		return false
	}
	for _, c := range s.Clauses {
		if c == nil {
			continue
		}
		if user(c.Records) {
			return true
		}
		for _, seg := range c.Segments {
			if seg != nil && user(seg.Records) {
				return true
			}
		}
	}
	for _, a := range s.Aggs {
		if a != nil && user(a.Keys) {
			return true
		}
	}
	return false
}

// Stmts returns the statement number of each of n clauses, and after
// them the number of statements, given how many probe descriptions
// clause i has (ndescs(i)); a clause of none is one statement.
func Stmts(n int, ndescs func(i int) int) []int {
	stmts := make([]int, n+1)
	for i := 0; i < n; i++ {
		stmts[i+1] = stmts[i] + max(ndescs(i), 1)
	}
	return stmts
}

// ClauseSpec is one compiled clause: a BPF function with the signature
// R1 = program context, R2 = pointer to this CPU's scratch area (see
// ScratchLayout); it returns 0. The loader calls it from a probe program
// after the provider's prologue filled the machine state.
type ClauseSpec struct {
	// Index is the clause's position in the program, from 0.
	Index int
	// Symbol names the function ("dt_clause_N").
	Symbol string
	// Probes holds the probe descriptions the clause is enabled on, as
	// written ("syscall::read:entry"), after macro expansion.
	Probes []string
	// Insns is the function body; the first instruction carries Symbol.
	Insns asm.Instructions
	// EPID is the clause's EPID on the first probe it is enabled on
	// (clause index + 1); the loader hands out more for further probes and
	// stores the running one in mstate.epid, from where records take it.
	EPID uint32
	// Segments describe the records the clause emits. A clause emits one
	// record per straight-line run of data actions: an if/else whose
	// branches hold data actions ends the current record and each branch
	// has its own, so the consumer never guesses which branch ran. The
	// record header (doc.go) carries the segment index at offset 8.
	Segments []*RecordSpec
	// Records and RecordSize describe segment 0, the only one in most
	// clauses (nil and 0 when the clause emits no record).
	Records    []Record
	RecordSize uint32
	// IsError is set for clauses enabled on dtrace:::ERROR; they are also
	// called from dt_error.
	IsError bool
	// ReadsArgs is set when the clause (predicate included) reads
	// arg0-arg9 or args[]: a probe none of whose clauses does may leave
	// the arguments out of its prologue (provider.ArgsSkipper).
	ReadsArgs bool
}

// RecordSpec describes one kind of record a clause emits.
type RecordSpec struct {
	// Index is the segment number, stored at offset 8 of the record.
	Index uint32
	// Records are the items in order.
	Records []Record
	// Size is the record size in bytes, including the 16-byte header.
	Size uint32
	// First is set on the segment that can be the first record of a
	// firing; the consumer prints the default "CPU ID FUNCTION:NAME" line
	// for those.
	First bool
}

// ScratchLayout gives the offsets inside the per-CPU scratch value.
type ScratchLayout struct {
	// Size is the total value size of the scratch map entry.
	Size uint32
	// MState is the offset of the machine state (args, probe id, fault
	// information) filled by the provider prologue.
	MState uint32
	// Output is the offset of the buffer where a record is assembled.
	Output uint32
	// Temps is the offset of the area for temporaries (strings, tuples,
	// this-> variables); it runs to Size.
	Temps uint32
	// Alloca is the size of the alloca() arena, which lies in the
	// temporaries after the fixed buffers (this-> variables, string
	// comparison and strtok buffers).
	Alloca uint32
}

// Record is one item of a record: what the consumer does with the bytes
// at Offset.
type Record struct {
	Action Action
	Offset uint32
	Size   uint32
	// FormatID indexes Spec.Formats for printf/printa-like actions; -1
	// when the action has no format.
	FormatID int
	// AggID indexes Spec.Aggs for printa/clear/trunc/normalize...; -1 when
	// none.
	AggID int
	// Kind tells the consumer how to decode the value.
	Kind ValueKind
	// NArgs is the number of ActArg items that follow an action with
	// arguments (printf, printa, trunc, normalize, setopt, ...).
	NArgs int
	// Type, for ActPrint of a pointer to a sized object, is the D type
	// of the object: the item holds the u64 address and then the
	// object's Size-8 bytes (Kind KindBytes). The consumer walks it
	// (members, offsets, enums, bit-fields) to print the value.
	// With ByValue, ActPrint of any other value (print(1 + 2),
	// print(*p)): the item holds the value as trace() stores it, and
	// Type is its D type.
	Type    *Type
	ByValue bool
}

// Action is the D action that made a record item: what the consumer
// does with it and, as output.Item.Kind, what a renderer shows. It is the
// one enumeration of actions from the builtin table (check's FuncID rows
// name their generator in codegen, which writes items of this action) to
// the renderers.
type Action int

// Actions. Data actions store their value at Offset; library actions with
// arguments are followed by NArgs ActArg items holding them. The
// consumer hands a renderer ustack() as ActStack and mod(), usym(),
// umod() and uaddr() as ActSym: their values say which (Stack's
// User, Sym's Kind).
const (
	ActNone        Action = iota
	ActArg                // an argument of the preceding action
	ActTrace              // trace(x): print the value per Kind
	ActPrintf             // printf(fmt, args...): FormatID, NArgs args
	ActPrinta             // printa([fmt,] @a): FormatID (-1), AggID; the consumer prints the aggregation
	ActPrint              // print(p): the address and pointee bytes, typed by Record.Type
	ActTracemem           // tracemem(addr, size): Size raw bytes
	ActExit               // exit(n): an int32 status; dt_state is set too
	ActStack              // stack(): placeholder (Size bytes of zero PCs)
	ActUStack             // ustack(): placeholder
	ActClear              // clear(@a)
	ActTrunc              // trunc(@a[, n]): NArgs = 0 or 1
	ActNormalize          // normalize(@a, n): 1 arg
	ActDenormalize        // denormalize(@a)
	ActSetopt             // setopt(name[, value]): FormatID indexes the name; NArgs = 0 or 1 (string arg)
	ActCommit             // commit(id): u64 speculation id
	ActDiscard            // discard(id): u64 speculation id
	ActSpeculate          // speculate(id): records of the clause go to id (also in the header)
	ActPrintm             // printm/ raw memory
	ActSystem             // system(fmt, args...): destructive
	ActRaise              // raise(sig): destructive
	ActFtruncate          // ftruncate()
	ActFreopen            // freopen(fmt, args...)
	ActSym                // sym(addr)/func(addr): u64 kernel address
	ActUSym               // usym/ufunc/uaddr: u64 user address
	ActMod                // mod(addr)
	ActUMod               // umod(addr)
	ActBreakpoint         // breakpoint()
	ActPanic              // panic()
	ActStop               // stop()
	ActSnapshot           // snapshot([n]): a u32, nonzero when this firing takes a snapshot
	ActTraceoff           // traceoff([n]): acted on in the kernel, no record item
	ActTraceon            // traceon(): acted on in the kernel, no record item
	ActChill              // chill(ns): acted on in the kernel, no record item
	ActPcap               // pcap(skb, proto): Size bytes of packet; 3 args: u64 time (CLOCK_MONOTONIC ns), u64 captured length, u64 link type
)

// actionNames are the actions' D names, by Action.
var actionNames = [...]string{ActNone: "", ActArg: "arg", ActTrace: "trace", ActPrintf: "printf",
	ActPrinta: "printa", ActPrint: "print", ActTracemem: "tracemem", ActExit: "exit", ActStack: "stack",
	ActUStack: "ustack", ActClear: "clear", ActTrunc: "trunc", ActNormalize: "normalize",
	ActDenormalize: "denormalize", ActSetopt: "setopt", ActCommit: "commit", ActDiscard: "discard",
	ActSpeculate: "speculate", ActPrintm: "printm", ActSystem: "system", ActRaise: "raise",
	ActFtruncate: "ftruncate", ActFreopen: "freopen", ActSym: "sym", ActUSym: "usym", ActMod: "mod",
	ActUMod: "umod", ActBreakpoint: "breakpoint", ActPanic: "panic", ActStop: "stop",
	ActSnapshot: "snapshot", ActTraceoff: "traceoff", ActTraceon: "traceon", ActChill: "chill", ActPcap: "pcap"}

// String returns the action's D name ("printf"), "unknown" for a value
// that is no action.
func (a Action) String() string {
	if a > 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// ValueKind tells how to decode a record item.
type ValueKind int

// Value kinds.
const (
	KindNone     ValueKind = iota
	KindSigned             // little-endian signed integer of Size bytes
	KindUnsigned           // little-endian unsigned integer of Size bytes
	KindString             // NUL-terminated within Size bytes
	KindBytes              // raw bytes (structs, arrays, tracemem)
	KindStack              // Size/8 u64 PCs, 0-terminated
	KindUStack             // u64 tgid, then (Size-8)/8 u64 user PCs, 0-terminated
	KindSym                // u64 kernel address of sym()/func()
	KindMod                // u64 kernel address of mod()
	KindUSym               // u64 tgid, then the u64 user address of usym()/ufunc()
	KindUMod               // u64 tgid, then the u64 user address of umod()
	KindUAddr              // u64 tgid, then the u64 user address of uaddr()
)

// AggSpec describes one aggregation.
type AggSpec struct {
	ID   int
	Name string
	// Map names the per-CPU hash holding it ("dt_agg_N").
	Map string
	// Func is the aggregating function (count, sum, ...).
	Func string
	// KeySize is the map's key size; Keys describe the tuple items in it.
	KeySize uint32
	Keys    []Record
	// ValueSize is the per-CPU value size (layout per aggregate/doc.go).
	ValueSize uint32
	// Params are lquantize/llquantize parameters (base/factor, low, high,
	// step/nsteps).
	Params []int64
	// Desc is the aggregation's description for package aggregate (the
	// value layout and bucket parameters).
	Desc AggDesc
	// Cache, when set, names the aggregation's per-CPU front cache
	// (aggcache.go): a PERCPU_ARRAY of CacheSlots slots, each a u64
	// "claimed" word, the key (KeySize rounded up to 8) and a value.
	// Each firing updates one of the two; the consumer merges a key's
	// cached values with its values in Map.
	Cache      string
	CacheSlots uint32
	// ChargedSize is what one entry costs against aggsize: dtrace's
	// size of the key (a string item is strsize wide there, however
	// narrow it is here) and the value.
	ChargedSize uint32
}

// CacheKeyOff and CacheValueOff are the offsets of the key and of the
// value in a slot of AggSpec.Cache.
func (a *AggSpec) CacheKeyOff() uint32   { return 8 }
func (a *AggSpec) CacheValueOff() uint32 { return 8 + (a.KeySize+7)&^7 }
