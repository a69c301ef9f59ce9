package abi

import "fmt"

// Record header: the first HdrSize bytes of every record in dt_buf.
const (
	// HdrEPID is the offset of the u32 EPID (enabled probe id) that tells
	// which probe and clause wrote the record, or a reserved EPID.
	HdrEPID = 0
	// HdrSpecID is the offset of the u32 speculation id the record belongs
	// to (0 unless the clause called speculate()).
	HdrSpecID = 4
	// HdrSegment is the offset of the u32 index of the record's layout in
	// the clause's ClauseSpec.Segments.
	HdrSegment = 8
	// HdrReserved is the offset of a u32 that is always 0.
	HdrReserved = 12
	// HdrSize is the size of the header; the record's items follow it.
	HdrSize = 16
)

// Reserved EPIDs. The loader numbers clause EPIDs from 1 upwards and
// stays below EPIDReserved.
const (
	// EPIDNone is never the EPID of a record.
	EPIDNone = 0
	// EPIDReserved is the first EPID kept for control records.
	EPIDReserved = 0xFFFFFF00
	// EPIDFault is the EPID of a fault record (FaultRec* layout).
	EPIDFault = 0xFFFFFF01
)

// Fault record: what a clause emits to dt_buf when it faults, as
// DTrace's ERROR record carries it.
const (
	// FaultRecEPID is the offset of the u32 EPIDFault.
	FaultRecEPID = 0
	// FaultRecClause is the offset of the u32 statement number of the
	// faulting clause (dtrace numbers each probe description of a clause).
	FaultRecClause = 8
	// FaultRecProbe is the offset of the u32 probe id that fired.
	FaultRecProbe = 12
	// FaultRecCode is the offset of the u64 fault code (Flt*).
	FaultRecCode = 16
	// FaultRecIllval is the offset of the u64 offending address or value.
	FaultRecIllval = 24
	// FaultRecPC is the offset of the u64 instruction index of the fault
	// within the clause function (-1: unknown).
	FaultRecPC = 32
	// FaultRecClauseEPID is the offset of the u32 EPID of the faulting
	// clause.
	FaultRecClauseEPID = 40
	// FaultRecordSize is the size of a fault record; the library checks
	// that bufsize can hold one.
	FaultRecordSize = 56
)

// Fault codes (DTrace's DTRACEFLT_*), stored in mstate.fault, in the
// fault record and in the ERROR probe's arg4.
const (
	// FltUnknown is a fault of no known kind.
	FltUnknown = 0
	// FltBadAddr is a load or store through an invalid address.
	FltBadAddr = 1
	// FltBadAlign is a misaligned scalar access through a pointer.
	FltBadAlign = 2
	// FltIllOp is an illegal operation (a bad argument to a subroutine).
	FltIllOp = 3
	// FltDivZero is a division or modulus by zero.
	FltDivZero = 4
	// FltNoScratch is running out of scratch memory.
	FltNoScratch = 5
	// FltKPriv is a kernel access without privilege.
	FltKPriv = 6
	// FltUPriv is a user access without privilege.
	FltUPriv = 7
	// FltTupOflow is an overflow of the tuple stack.
	FltTupOflow = 8
	// FltBadStack is a bad stack.
	FltBadStack = 9
	// FltBadSize is a copy whose size runs past its destination.
	FltBadSize = 10
	// FltBadIndex is an array index out of bounds.
	FltBadIndex = 11
	// FltLibrary is a fault the consumer raises while running an action.
	FltLibrary = 12
)

// faultNames are dtrace's words for the fault codes.
var faultNames = [...]string{
	FltBadAddr:   "invalid address",
	FltBadAlign:  "invalid alignment",
	FltIllOp:     "illegal operation",
	FltDivZero:   "divide-by-zero",
	FltNoScratch: "out of scratch space",
	FltKPriv:     "invalid kernel access",
	FltUPriv:     "invalid user access",
	FltTupOflow:  "tuple stack overflow",
	FltBadStack:  "bad stack",
	FltBadSize:   "invalid size",
	FltBadIndex:  "index out of bounds",
	FltLibrary:   "library-level fault",
}

// FaultName returns dtrace's message for a fault code, or "" for a code
// it has no words for.
func FaultName(code uint64) string {
	if code < uint64(len(faultNames)) {
		return faultNames[code]
	}
	return ""
}

// Machine state (mstate): per-CPU state at ScratchLayout.MState in
// dt_scratch, filled by the loader's and the provider's prologue and read
// by the clauses.
const (
	// MStateArgs is the offset of u64 arg[MStateNArgs], the probe's
	// arguments as the provider gives them (zero past the last).
	MStateArgs = 0
	// MStateNArgs is the number of arguments in mstate.
	MStateNArgs = 10
	// MStatePrid is the offset of the u32 probe id that fired.
	MStatePrid = 80
	// MStateEPID is the offset of the u32 EPID of the running clause.
	MStateEPID = 84
	// MStateFault is the offset of the u64 code of the last fault (0: none).
	MStateFault = 88
	// MStateIllval is the offset of the u64 offending address or value of
	// the last fault.
	MStateIllval = 96
	// MStateTimestamp is the offset of the u64 timestamp cached for the
	// firing (0: not read yet).
	MStateTimestamp = 104
	// MStateSpecID is the offset of the u64 speculation the running clause
	// writes to (0: none).
	MStateSpecID = 112
	// MStateErrno is the offset of the u64 errno of the firing (syscall
	// return probes), else 0.
	MStateErrno = 120
	// MStatePrivate is the offset of the bytes codegen keeps for itself
	// (codegen/doc.go); prologues do not touch them.
	MStatePrivate = 128
	// MStateUCaller is the offset of the u64 return address that the
	// user stack's frame-pointer walk misses at this firing, else 0: a
	// pid probe at a function's entry (or at an offset before its frame
	// is set up) fires before the caller's frame is linked, so the
	// provider's prologue reads the return address from the user stack;
	// ustack(), ustackdepth and ucaller splice it in as the second frame
	// when the kernel's unwinder has not already (codegen).
	MStateUCaller = 256
	// MStateFlowKey is the offset of the u64 key of the firing's flow
	// in dt_flowbio when it is not the thread's own (io:::start and
	// io:::done: the request's first bio), else 0. The loader zeroes it
	// in every firing of a program that has dt_flowbio.
	MStateFlowKey = 272
	// MStateStash is the offset of two u64 that belong to providers'
	// prologues and keep their values from one firing to the next on a
	// CPU: a probe whose tracepoint lacks what it needs remembers it
	// from an earlier tracepoint of the same work (the tcp provider
	// keeps the last TCP segment received, whose headers the state
	// change it causes reports). Neither codegen nor the loader touches
	// them.
	MStateStash = 280
	// MStateSize is the size of mstate; codegen keeps the bytes between
	// MStateUCaller and MStateFlowKey for itself too.
	MStateSize = 296
)

// Attach cookies (bpf_get_attach_cookie) of probes that share one
// program (provider.Sharer): the probe id is in the low 32 bits, where
// the loader's shared prologue reads it. The pid provider's return probes
// on the instructions that leave a function keep the instruction's offset
// and condition above it.
const (
	// CookieProbeIDMask selects the probe id.
	CookieProbeIDMask = 1<<32 - 1
	// CookieOffShift is where a pid return site's offset in its function
	// begins; it is CookieOffBits wide.
	CookieOffShift = 32
	CookieOffBits  = 27
	// CookieCondShift is where the condition of a pid return site on a
	// conditional jump begins: 0 for a ret or jmp, 1 + the condition
	// code (at most 16) otherwise.
	CookieCondShift = CookieOffShift + CookieOffBits
)

// Probe ids of the dtrace provider: the registry numbers probes from 1
// and lists these first.
const (
	// ProbeBegin is dtrace:::BEGIN.
	ProbeBegin = 1
	// ProbeEnd is dtrace:::END.
	ProbeEnd = 2
	// ProbeError is dtrace:::ERROR.
	ProbeError = 3
)

// Map names. Codegen declares them in Spec.Maps, the loader creates them,
// the consumer reads them.
const (
	// MapBuf is the perf event array the records go out through.
	MapBuf = "dt_buf"
	// MapScratch is the array of one scratch area per CPU (mstate, the
	// record being built, temporaries).
	MapScratch = "dt_scratch"
	// MapState is the array of one run state (State* layout).
	MapState = "dt_state"
	// MapCPUState is the per-CPU array of one set of counters (CPU* layout).
	MapCPUState = "dt_cpustate"
	// MapGVars is the array of one value holding the global variables.
	MapGVars = "dt_gvars"
	// MapTVars is the hash of thread-local variables (TVarKey* key).
	MapTVars = "dt_tvars"
	// MapAssoc is the hash of associative array elements (AssocKey* key).
	MapAssoc = "dt_assoc"
	// MapSpec is the array of speculation slots, indexed by speculation id.
	MapSpec = "dt_spec"
	// MapZero is an array of one all-zero value that new aggregation
	// entries are copied from.
	MapZero = "dt_zero"
	// MapProbes is the array, indexed by probe id, of the probes' names
	// (ProbeNameSize bytes each), which the library fills.
	MapProbes = "dt_probes"
	// MapSnapshot is the array of one value holding a u64 count per
	// snapshot(n) or traceoff(n) call of the program: the firings that
	// took a snapshot or turned tracing off.
	MapSnapshot = "dt_snapshot"
	// MapFlow is the hash of flow variables (beyond DTrace), keyed by
	// the u64 tid of the thread doing the work: one Flow* value each.
	MapFlow = "dt_flow"
	// MapFlowData is the hash of flows in flight in a pipe or socket:
	// keyed by FlowDataKey*, one Flow* value each (FlowAux holds the
	// stream offset just past the write's bytes).
	MapFlowData = "dt_flowdata"
	// MapFlowPos is the hash of the stream positions of each pipe or
	// socket that carries flows, keyed by its kernel address
	// (FlowPos* value).
	MapFlowPos = "dt_flowpos"
	// MapFlowTag is the hash from a tag of a write's first 16 bytes
	// and its stream to the write's offset, by which a reader of those
	// bytes finds its write when readers race (u64 key, u64 value).
	MapFlowTag = "dt_flowtag"
	// MapFlowBio is the hash of flows of block I/O in flight, keyed by
	// the u64 address of the struct bio the submitter's flow was filed
	// under (one Flow* value each).
	MapFlowBio = "dt_flowbio"
	// MapAggPrefix starts the name of each aggregation's per-CPU hash.
	MapAggPrefix = "dt_agg_"
	// MapAggCachePrefix starts the name of each aggregation's per-CPU
	// cache of recent keys.
	MapAggCachePrefix = "dt_aggc_"
	// MapAggMapsPrefix starts the name of an array of aggregation
	// hashes of one key and value size, through which a program of many
	// aggregations reaches them (a program may name at most 64 maps).
	MapAggMapsPrefix = "dt_aggmaps_"
)

// AggMap is the name of aggregation id's per-CPU hash.
func AggMap(id int) string { return fmt.Sprintf("%s%d", MapAggPrefix, id) }

// AggCacheMap is the name of aggregation id's key cache.
func AggCacheMap(id int) string { return fmt.Sprintf("%s%d", MapAggCachePrefix, id) }

// dt_state: the run state every probe program checks.
const (
	// StateActivity is the offset of the u32 activity (Activity*).
	StateActivity = 0
	// StateExitStatus is the offset of the u32 status exit() set.
	StateExitStatus = 4
	// StateTraceOff is the offset of the u32 recording gate: nonzero
	// while traceoff() keeps records of active tracing out of the
	// buffers (codegen's flush checks it; traceon() clears it).
	StateTraceOff = 8
	// StateSize is the size of dt_state's value.
	StateSize = 16
)

// Activity values of dt_state (docs/ARCHITECTURE.md, "Activity").
const (
	// ActivityInactive: before BEGIN; only BEGIN runs its clauses.
	ActivityInactive = 0
	// ActivityActive: tracing; ordinary probes and ERROR run their clauses.
	ActivityActive = 1
	// ActivityDraining: exit() was called or the consumer is stopping;
	// only END runs its clauses.
	ActivityDraining = 2
	// ActivityStopped: END has run; no clause runs.
	ActivityStopped = 3
)

// dt_cpustate: u64 counters per CPU that the consumer sums and reports.
const (
	// CPUDynVarDrops counts dynamic variable drops (dt_tvars/dt_assoc full).
	CPUDynVarDrops = 0
	// CPUAggDrops counts aggregation drops (a dt_agg_N full).
	CPUAggDrops = 8
	// CPUSpecDrops counts speculative drops.
	CPUSpecDrops = 16
	// CPUSpecBusy counts speculation() calls that failed with every
	// buffer busy.
	CPUSpecBusy = 24
	// CPUSpecUnavail counts speculation() calls that failed with no
	// buffer available.
	CPUSpecUnavail = 32
	// CPUErrors counts faults.
	CPUErrors = 40
	// CPUFlowDrops counts flow variable drops (beyond DTrace) the
	// programs see: a flow table update that failed, a stream's offsets
	// put off by a short write.
	CPUFlowDrops = 48
	// CPUChillMark is the u64 bpf_ktime_get_ns at which this CPU's
	// current chill() interval began, CPUChilled the nanoseconds chilled
	// in it (codegen/chill.go; not counters).
	CPUChillMark = 56
	CPUChilled   = 64
	// CPUFlowMade and CPUFlowGone count the entries the programs create
	// in the flow tables and those they delete: the consumer reports
	// made - gone - still present, the entries the LRU tables evicted,
	// as flow drops at the end.
	CPUFlowMade = 72
	CPUFlowGone = 80
	// CPUStateSize is the size of dt_cpustate's value.
	CPUStateSize = 88
)

// Keys and values of the dynamic-variable and speculation maps.
const (
	// TVarKeyTID is the offset in a dt_tvars key of the u64 thread id.
	TVarKeyTID = 0
	// TVarKeyVar is the offset in a dt_tvars key of the u64 variable id.
	TVarKeyVar = 8
	// FlowID, FlowAux and FlowVars lay out a dt_flow value: the u64
	// flow id (0: none), a u64 the transports use (dt_flowdata: the
	// end offset of the write), then the flow-> variables.
	FlowID   = 0
	FlowAux  = 8
	FlowVars = 16
	// FlowDataKeySize is the size of a dt_flowdata key: the u64 address
	// of the pipe or socket, the u64 stream offset of the write's first
	// byte.
	FlowDataKeySize = 16
	// FlowPosWrite and FlowPosRead are the u64 byte counts written and
	// read of a stream in a dt_flowpos value; FlowPosCur is the offset
	// of the write whose bytes the reader is in, FlowPosOld that of the
	// oldest write still on file.
	FlowPosWrite = 0
	FlowPosRead  = 8
	FlowPosCur   = 16
	FlowPosOld   = 24
	FlowPosSize  = 32
	// TVarKeySize is the size of a dt_tvars key.
	TVarKeySize = 16
	// AssocKeyVar is the offset in a dt_assoc key of the u64 variable id.
	AssocKeyVar = 0
	// AssocKeyTID is the offset in a dt_assoc key of the u64 thread id
	// (0 for global associative arrays).
	AssocKeyTID = 8
	// AssocKeyTuple is the offset in a dt_assoc key of the encoded tuple.
	AssocKeyTuple = 16
	// SpecStateSize is the size of a dt_spec value: u64 busy flag, u64 0.
	SpecStateSize = 16
	// ProbeNameSize is the size of each of the four NUL-padded names
	// (provider, module, function, name) of a dt_probes value.
	ProbeNameSize = 64
	// ProbesMaxEntries is the number of dt_probes entries codegen
	// declares; the library narrows it to the largest enabled probe id.
	ProbesMaxEntries = 4096
)
