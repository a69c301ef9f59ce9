// Package abi is the contract between the BPF side (the code codegen
// generates, the loader's probe programs, the providers' prologues) and
// the consumer: map names and sizes, record and fault layouts, machine
// state offsets, run-state values and reserved ids. It is the only place
// these numbers are written down; everything else names them from here.
// It imports nothing of the project's.
//
// All values are little-endian. Offsets are in bytes.
//
// # Records (dt_buf)
//
// Every record a clause emits starts with a header:
//
//	0  u32 epid      HdrEPID     enabled probe id (loader), or EPIDFault
//	4  u32 specid    HdrSpecID   speculation id, 0 if none
//	8  u32 segment   HdrSegment  index into ClauseSpec.Segments
//	12 u32 0         HdrReserved
//	16 items ...     HdrSize     at the RecordSpec's offsets
//
// EPID 0 is never used; EPIDs from EPIDReserved up are control records.
// The only control record is the fault record (exit and drops are read
// from dt_state and dt_cpustate, which are authoritative):
//
//	0  u32 EPIDFault          4  u32 0
//	8  u32 statement number   12 u32 probe id         FaultRecClause, FaultRecProbe
//	16 u64 fault code (Flt*)                          FaultRecCode
//	24 u64 illval (offending address or value)        FaultRecIllval
//	32 u64 pc within the clause function (-1 none)    FaultRecPC
//	40 u32 epid of the clause  44 u32 0               FaultRecClauseEPID
//	48 u64 0
//	56                                                FaultRecordSize
//
// # Machine state (mstate, in dt_scratch at ScratchLayout.MState)
//
//	0   u64 arg[10]    MStateArgs       the provider's arguments, 0 past the last
//	80  u32 prid       MStatePrid       probe id (ProbeBegin 1, ProbeEnd 2, ProbeError 3)
//	84  u32 epid       MStateEPID       EPID of the running clause
//	88  u64 fault      MStateFault      code of the last fault, 0 none
//	96  u64 illval     MStateIllval     its offending address or value
//	104 u64 timestamp  MStateTimestamp  cached per firing, 0 not yet read
//	112 u64 specid     MStateSpecID     speculation of the running clause, 0 none
//	120 u64 errno      MStateErrno      errno of the firing, else 0
//	128 ...            MStatePrivate    codegen's own slots (codegen/doc.go)
//	256 u64 ucaller    MStateUCaller    return address the user stack walk misses, else 0
//	264 ...            (private)        codegen's own slots again (codegen/doc.go)
//	272 u64 flowkey    MStateFlowKey    dt_flowbio key of the firing's flow, 0 the thread's
//	280 u64 stash[2]   MStateStash      providers' own, kept between firings on the CPU
//	296                MStateSize
//
// The loader's prologue zeroes errno and ucaller (and flowkey when the program has dt_flowbio), runs the provider's prologue (which
// fills arg[], ucaller at pid entry probes), then sets prid and zeroes fault, illval, timestamp and
// specid; before each clause call it sets epid and zeroes specid again.
//
// # Maps
//
//	dt_buf       MapBuf       perf event array, one per CPU: the records
//	dt_scratch   MapScratch   array, one entry per CPU: mstate, records being built, temporaries
//	dt_state     MapState     array[1]:  0 u32 activity  4 u32 exit status  (StateSize 16)
//	dt_cpustate  MapCPUState  per-CPU array[1] of u64 counters (CPUStateSize 88):
//	                            0 dynamic variable drops   8 aggregation drops
//	                           16 speculative drops       24 speculation busy
//	                           32 speculation unavailable 40 errors (faults)
//	                           48 flow drops              56 chill() interval start
//	                           64 ns chilled in it        72 flow entries made
//	                           80 flow entries deleted
//	dt_gvars     MapGVars     array[1]: global variables at offsets codegen fixes
//	dt_tvars     MapTVars     hash: key {0 u64 tid, 8 u64 var id}, value a thread-local
//	dt_assoc     MapAssoc     hash: key {0 u64 var id, 8 u64 tid or 0, 16 tuple}
//	dt_spec      MapSpec      array[nspec+1] of {u64 busy, u64 0}; id 0 unused
//	dt_zero      MapZero      array[1] of zeros: initial aggregation values
//	dt_probes    MapProbes    array by probe id: 4 x ProbeNameSize NUL-padded names
//	dt_agg_N     AggMap(N)    per-CPU hash per aggregation (aggregate/doc.go)
//	dt_aggc_N    AggCacheMap  per-CPU array: aggregation N's cache of recent keys
//
// # Activity (dt_state.activity)
//
//	ActivityInactive 0 --BEGIN--> ActivityActive 1 --exit()/stop--> ActivityDraining 2 --END--> ActivityStopped 3
//
// BEGIN runs its clauses while INACTIVE and then increments the activity
// (to DRAINING → STOPPED if a BEGIN clause called exit()); ordinary
// probes and ERROR run clauses only while ACTIVE; exit() sets DRAINING and
// the exit status; END runs while DRAINING, then increments to STOPPED.
//
// # Options
//
// The BPF side reads no option at run time: strsize, nspec, dynvarsize,
// aggsize and the like are compiled into the instructions and the map
// sizes, so there are no option slots.
package abi
