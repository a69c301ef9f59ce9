package codegen

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
	// Funcs holds shared BPF subprograms (string helpers, the ERROR
	// dispatcher, ...) that clause bodies call by symbol. The loader appends
	// the ones a program references.
	Funcs []asm.Instructions
	// Layout describes the per-CPU scratch area; see doc.go.
	Layout ScratchLayout
	// Aggs describes every aggregation, indexed by AggID.
	Aggs []*AggSpec
	// Formats holds printf/printa format strings, indexed by FormatID.
	Formats []string
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
)

// MapSpec describes one map. MaxEntries of 0 on an array or perf event
// array means "one per possible CPU", filled in by the loader.
type MapSpec struct {
	Name       string
	Kind       MapKind
	KeySize    uint32
	ValueSize  uint32
	MaxEntries uint32
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
	// EPID is the enabled probe id the clause writes into its data records.
	// The loader may re-number when one clause is enabled on several
	// probes; records carry the EPID, the consumer maps it to Layout.
	EPID uint32
	// Records describes the data record the clause emits, if any.
	Records []Record
	// RecordSize is the size in bytes of the emitted record (0 if none).
	RecordSize uint32
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
}

// Record is one item of a clause's data record: what the consumer does
// with the bytes at Offset.
type Record struct {
	Action Action
	Offset uint32
	Size   uint32
	// FormatID indexes Spec.Formats for printf/printa-like actions.
	FormatID int
	// AggID indexes Spec.Aggs for printa/clear/trunc/normalize...
	AggID int
	// Kind tells the consumer how to decode the value (integer size and
	// sign, string, raw bytes, stack, ...).
	Kind ValueKind
}

// Action is what the consumer does with a record item.
type Action int

// ValueKind tells how to decode a record item.
type ValueKind int

// AggSpec describes one aggregation.
type AggSpec struct {
	ID   int
	Name string
	Map  string
}
