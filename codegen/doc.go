// Package codegen compiles checked D clauses to eBPF (cilium/ebpf/asm)
// and describes everything the loader and the consumer need in a
// deterministic Spec.
//
// # Entry points
//
//	spec, err := codegen.Generate(info, codegen.Options{StrSize: 256})
//
// Generate adapts dlang/check's Info; GenerateClauses and GenerateProgram
// take codegen's own Info interface (types.go), which tests implement
// directly. Errors carry a D source position (*Error, via errors.As
// on an error with a Pos field).
//
// # Functions
//
// Each clause is a BPF function dt_clause_N (N = clause index) called as
// dt_clause_N(R1 = ctx, R2 = &dt_scratch[cpu]); it returns 0. Inside,
// R6 = ctx and R7 = scratch; R8, R9 and R1..R5 are expression
// temporaries, saved on the stack around helper calls; a value waits in
// a stack slot while a non-leaf sibling is compiled, so deep expressions
// do not run out of registers. The frame uses at most 224 bytes (layout
// in emit.go), which keeps clause + dt_error + ERROR clause within BPF's
// 512-byte call-chain limit. Spec.Funcs holds dt_error
// when the program has ERROR clauses. Every function's first instruction
// carries a source annotation (the kernel wants line info for every
// function once any instruction has it).
//
// # Scratch (dt_scratch value, per CPU)
//
//	0    mstate (abi.MStateSize bytes; the shared fields are abi.MState*),
//	     plus codegen's own slots from abi.MStatePrivate:
//	     128 u64 saved prid, 136..183 saved arg0..arg5,
//	     184 u64 saved epid (dt_error); 192 u64 this scratch area's
//	     address (set by each clause); 200 u64 laundering slot; 208 u64
//	     strtok() position + 1 (0: none); 216 u64 fault pc; 224
//	     cpuinfo_t (16 bytes) that curcpu points to; 240, 248 u64
//	     alloca() span; 256 u64 abi.MStateUCaller;
//	     264 u64 traceoff() of this clause closed the gate; 272 u64
//	     abi.MStateFlowKey; 280 abi.MStateStash (two u64, providers')
//	320  fault record being built (abi.FaultRecordSize bytes)
//	512  Layout.Output: the data record being built
//	Layout.Temps: this-> variables (fixed offsets, shared by all clauses),
//	     strA/strB (string comparison), the strtok buffer and delimiter
//	     map, then temporaries: alloca() memory lives until the clause
//	     ends, everything else for one statement (integer subexpressions
//	     release theirs at once). Layout.Size stays below 32 KiB because
//	     offsets from R7 are 16-bit; Generate fails beyond that.
//
// # Values and arithmetic
//
// As in DTrace, expression values are 64-bit registers: loads, literals
// and casts extend by their type; +, -, *, <<, ~ and unary - do not
// truncate; the result type picks signed/unsigned /, % and >> and the
// operands' common type picks signed/unsigned comparisons; stores,
// casts and record items truncate. The common type is dtrace's
// (dt_type_promote), not C's: no promotion to int, the wider operand
// wins, at equal width the unsigned one (unsigned char + char is
// unsigned char, so a record of it holds one byte). Signed % follows DTrace's BPF code:
// |x| % |y|, negative when exactly one operand is (19 % -5 == -4).
// Strings, structs and arrays are pointers to their bytes.
//
// String variables take strsize+2 bytes rounded to 8: up to strsize
// characters, the NUL, and a flag byte at offset strsize+1 that is 1
// when the variable holds NULL (loads then yield 0). Unset dynamic
// strings are NULL; storing NULL into one deletes it.
//
// Loops over strings are bounded by strsize and written so that leaving
// the loop is the fall-through path (see exitIf): the verifier's stack
// of pending branches stays shallow. Positions found in a loop go
// through scratch memory so the code after the loop is verified once.
// index(), rindex() and strstr() compare every candidate position and
// cost the verifier about 200k instructions each: a program can hold a
// few of them, not dozens.
//
// D pointers are plain numbers to the verifier (& of a global's or
// clause-local's element or member, and casts of pointers to integers,
// launder the address through mstate). alloca() and copyin() memory
// comes from an arena in the temporaries (Layout.Alloca bytes, after the
// fixed buffers), restarted by every clause; mstate+240/248 hold the
// offsets of the span the clause has allocated (alloca.go). Stores
// through pointers (*p = v, p[i] = v, p->m = v) must land in that span,
// the clause-local variables or dt_gvars (the global variables); loads
// through pointers into scratch past mstate in the span or the
// clause-locals; the destinations of bcopy()/copyinto() in the span.
// Anything else faults with "invalid address" (a copy running past the
// span: "invalid size"), so a pointer kept from another clause points at
// nothing. Scalars read or written through *p and p[i] must be aligned
// to their size ("invalid alignment"). Recording a NULL string (trace,
// printf) faults with "invalid address" (illval 0), as in DTrace.
//
// # Translators and builtins
//
// A member of a translated value (xlate<T>(x).m, xlate<T *>(p)->m,
// curpsinfo->m, args[i]->m of a translated probe argument) compiles to
// the translator's expression for m with the translator's parameter
// bound to the input expression; each use of the parameter evaluates
// the input again (xlate.go). A translation used whole (assigned,
// traced, *xlate<T *>(p)) is built member by member in a zeroed scratch
// temporary: scalars stored by the member's size, strings and arrays
// copied up to the member's size. ppid is the D library's psinfo_t
// translation of curthread, member pr_ppid.
//
// curcpu points to a cpuinfo_t each reference builds at mstate+224 of
// the CPU's own scratch: cpu_id = bpf_get_smp_processor_id(), cpu_pset
// = 0 (Linux has one processor set), cpu_chip and cpu_lgrp = the CPU's
// NUMA node (bpf_get_numa_node_id(); the package id is not reachable
// from BPF without kernel symbols, and a package is a node on most
// machines). The pointer stays valid: that CPU's entry only ever holds
// the same values.
//
// caller/ucaller are the second frame of bpf_get_stack's kernel/user
// stack (0 when there is none); stackdepth/ustackdepth the number of
// frames it returns (up to maxframes, at most 127). uregs[i] reads word
// i of the current task's user pt_regs (bpf_task_pt_regs(bpf_get_current_task_btf()),
// x86-64 order = regs-amd64.d's R_*); indexes 21..25 (segment
// registers, trap number) read 0, larger ones fault with a bad index.
// ipl is 0. progenyof(pid) walks real_parent from the current task (up
// to 32 levels) comparing tgids, with the task_struct layout taken from
// the psinfo_t translator's parameter (so it needs procfs.d loaded).
//
// # Records
//
// Every data record starts with the header of internal/abi (Hdr*): the
// EPID from mstate.epid, the speculation id from mstate.specid, the
// segment (index into ClauseSpec.Segments) and a zero word; then the
// items of ClauseSpec.Segments[segment].Records at their offsets. A clause emits one record per run of data actions; an
// if/else holding data actions closes the current record, and each
// branch emits its own. Items: ActTrace/ActExit/... hold one
// value; ActPrint holds the u64 address then the pointee's bytes
// (KindBytes; Record.Type is the pointee's type); ActPrintf/ActPrinta/ActSetopt/ActTrunc/... are followed by NArgs
// ActArg items. Integers are stored with their type's size (Kind
// KindSigned/KindUnsigned), strings as strsize+2 bytes rounded up to 8, NUL-terminated
// (KindString), structs and tracemem as raw bytes (KindBytes), kernel
// stacks as u64 PCs (KindStack), user stacks as the u64 tgid of the
// process followed by u64 PCs (KindUStack; the consumer needs the pid to
// symbolize them). The addresses of the symbol subroutines, traced
// (trace(usym(x)), usym(x);) or printf arguments, are u64 kernel
// addresses for sym()/func() and mod() (KindSym, KindMod) and, for
// usym()/ufunc(), umod() and uaddr(), the u64 tgid of the firing process
// followed by the u64 user address (KindUSym, KindUMod, KindUAddr), so
// that they resolve in the process they belong to, $target or not.
// printa's ActArg items carry AggID and size 0.
//
// exit(n) writes an ActExit item (int32) and also sets dt_state:
// exit_status = n, activity = DRAINING, both with one compare-and-exchange
// of the state's first word that only an INACTIVE or ACTIVE state
// passes; a later exit() leaves the state alone and records the status
// that won (END's exit() sets the status unconditionally).
//
// # Fault records
//
// A fault stores the code (abi.Flt*) and illval in mstate and the pc in
// codegen's slot, then the clause's fault tail builds the fault record
// (abi.EPIDFault, layout abi.FaultRec*; pc is the instruction index
// within the clause function) and emits it. A fault in an ERROR clause
// emits the record but does not recurse. dt_error calls private copies
// of the ERROR clauses (dt_error_clause_N, also in Spec.Funcs), so
// linking the Funcs a program references is enough. After the record
// the clause calls dt_error (unless it is itself an ERROR clause), which
// runs the ERROR clauses with arg1 = probe id, arg2 = clause index,
// arg3 = pc, arg4 = fault code, arg5 = illval and prid abi.ProbeError,
// then restores mstate; the faulting clause returns 0 and later clauses
// on the probe still run. The fault also counts in dt_cpustate errors.
//
// # Maps
//
// Names, the fixed layouts (dt_state, dt_cpustate, keys) and sizes are in
// internal/abi; what codegen decides:
//
//	dt_scratch   Layout.Size bytes per CPU
//	dt_gvars     global scalars and strings at fixed offsets
//	dt_tvars     value the largest thread-local (0/absent = unset;
//	             storing 0 deletes)
//	dt_assoc     tuple items 8 bytes for integers (widened by the
//	             key type's sign) and strsize+2 rounded to 8 for strings,
//	             zero-padded to the largest key
//	dt_spec      nspec+1 entries; speculation() claims one, commit and
//	             discard free it
//	dt_probes    for probeprov/probemod/probefunc/probename
//	dt_agg_N     per-CPU hash per aggregation: key = the encoded key
//	             tuple (as dt_assoc's tuple, or a u32 0 when there are no
//	             keys; a stack() key is depth u64 PCs, KindStack, empty
//	             in BEGIN/END; a ustack() key the u64 tgid then depth
//	             PCs, KindUStack; depth defaults to 20/100; a sym()
//	             or mod() key the u64 address, KindSym/KindMod; a
//	             usym(), ufunc(), umod() or uaddr() key the u64 tgid
//	             then the u64 address, KindUSym/KindUMod/KindUAddr; a
//	             string item whose every key expression is bounded is
//	             only as wide as the largest bound, rounded to 8:
//	             execname 16, probe names 64, a literal its length + 1
//	             — keywidth.go), value = package aggregate's slot layout
package codegen
