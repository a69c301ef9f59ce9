package check

import (
	"strconv"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// This file is the table of D's builtins: its functions (subroutines,
// actions and aggregating functions) and its variables. A function's row
// gives its name, kind, action class, prototype and D version, and the
// checker's rules for it; a variable's, its name, type and version. The
// code generator picks the generator of a function by its FuncID and of
// a variable by its VarID (codegen/builtins.go, whose entries also name
// the consumer action of the record an action writes). Adding a builtin
// is adding an ID, a row here, and a generator in codegen.

// FuncID identifies a builtin function: a row of the function table.
type FuncID int

// Builtin function IDs, one per row of the function table.
const (
	FuncNone FuncID = iota
	FuncAlloca
	FuncAvg
	FuncBasename
	FuncBcopy
	FuncBreakpoint
	FuncChill
	FuncCleanpath
	FuncCgrouppath // beyond DTrace: the current task's cgroup path
	FuncClear
	FuncCommit
	FuncCopyin
	FuncCopyinstr
	FuncCopyinto
	FuncCopyout
	FuncCopyoutstr
	FuncCount
	FuncDPath
	FuncDdiPathname
	FuncDenormalize
	FuncDirname
	FuncDiscard
	FuncExit
	// The transports of flow variables (beyond DTrace), called by the
	// clauses the library adds to a program that uses flow-> (dtrace/flow.go).
	FuncFlowFork
	FuncFlowExit
	FuncFlowRecv
	FuncFlowSend
	FuncFlowSent
	FuncFlowBio
	FuncFlowBioDone
	FuncFlowIO
	FuncFreopen
	FuncFtruncate
	FuncFunc
	FuncGetf
	FuncGetmajor
	FuncGetminor
	FuncHtonl
	FuncHtonll
	FuncHtons
	FuncIndex
	FuncInetNtoa
	FuncInetNtoa6
	FuncInetNtop
	FuncJSON
	FuncJstack
	FuncLinkNtop
	FuncLlquantize
	FuncLltostr
	FuncLquantize
	FuncMax
	FuncMin
	FuncMod
	FuncMsgdsize
	FuncMsgsize
	FuncMutexOwned
	FuncNewflow // beyond DTrace: end the thread's flow; the next flow-> store starts another
	FuncMutexOwner
	FuncMutexTypeAdaptive
	FuncMutexTypeSpin
	FuncNtohl
	FuncNtohll
	FuncNtohs
	FuncNormalize
	FuncPanic
	FuncPcap
	FuncPrinta
	FuncPrintf
	FuncPrint
	FuncProgenyof
	FuncQuantize
	FuncRaise
	FuncRand
	FuncRindex
	FuncRwIswriter
	FuncRwReadHeld
	FuncRwWriteHeld
	FuncSetopt
	FuncSnapshot // beyond DTrace: write what the buffers hold now
	FuncSpeculate
	FuncSpeculation
	FuncStack
	FuncStddev
	FuncStop
	FuncStrchr
	FuncStrlen
	FuncStrjoin
	FuncStrrchr
	FuncStrstr
	FuncStrtok
	FuncStrtoll
	FuncSubstr
	FuncSum
	FuncSym
	FuncSystem
	FuncTolower
	FuncToupper
	FuncTrace
	FuncTracemem
	FuncTraceoff // beyond DTrace: stop recording into the buffers
	FuncTraceon  // beyond DTrace: record again
	FuncTrunc
	FuncUaddr
	FuncUfunc
	FuncUmod
	FuncUstack
	FuncUsym

	// NumFuncIDs is one more than the largest FuncID.
	NumFuncIDs
)

// FuncDef is a row of the function table.
type FuncDef struct {
	ID   FuncID
	Name string
	Kind FuncKind
	// Proto is the prototype as dtrace writes it. "@" accepts any type,
	// "[T]" is optional and "..." variadic; kernel types are written
	// "vmlinux`T".
	Proto string
	// Since is the D version that introduced the function (0: 1.0).
	Since uint32
	// Lib names the D library file a program calling the function needs
	// (dlib.Needed), "" for none.
	Lib string

	class actKind // the action class, for the clause rules on speculations
	attr  *Attr   // the attributes, when not Stable/Stable/Common
	// unlexed marks a name dtrace's lexer does not know (not in
	// dt_open.c's identifiers: our additions and later versions'); see
	// IsPredefinedIdent.
	unlexed bool
	// alloca: the result points to alloca() memory.
	alloca bool
	// before and after are the function's own rules, applied before and
	// after the prototype check.
	before, after callRule
	// Aggregating functions: scalarArg requires a scalar argument #1,
	// incrArg is the argument count with the optional increment of a
	// quantizing function, params checks and returns its constant
	// parameters.
	scalarArg bool
	incrArg   int
	params    func(c *checker, call *syntax.CallExpr, tvs []TypeAndValue, prev *Agg) ([]int64, bool)
}

// callRule checks a call of a builtin function whose arguments have been
// checked (tvs); it reports false after reporting an error.
type callRule func(c *checker, e *syntax.CallExpr, fn *Func, tvs []TypeAndValue) bool

// evolvingAttr are the attributes of the functions dtrace marks Evolving.
var evolvingAttr = Attr{Evolving, Evolving, ClassCommon}

// funcTable is the table of builtin functions, indexed by FuncID.
var funcTable = [NumFuncIDs]FuncDef{
	FuncAlloca:            {Name: "alloca", Kind: Subroutine, Proto: "void *(size_t)", alloca: true, after: scratchSizeRule(0)},
	FuncAvg:               {Name: "avg", Kind: AggFunc, Proto: "void(@)", scalarArg: true},
	FuncBasename:          {Name: "basename", Kind: Subroutine, Proto: "string(const char *)"},
	FuncBcopy:             {Name: "bcopy", Kind: Subroutine, Proto: "void(void *, void *, size_t)", after: allocaArgRule(1)},
	FuncBreakpoint:        {Name: "breakpoint", Kind: Action, class: actDestruct, Proto: "void()"},
	FuncChill:             {Name: "chill", Kind: Action, class: actDestruct, Proto: "void(int)"},
	FuncCleanpath:         {Name: "cleanpath", Kind: Subroutine, Proto: "string(const char *)"},
	FuncCgrouppath:        {Name: "cgrouppath", Kind: Subroutine, Proto: "string()", Lib: "container.d", attr: &evolvingAttr, unlexed: true},
	FuncClear:             {Name: "clear", Kind: Action, class: actData, Proto: "void(@)", before: aggArgRule(D_CLEAR_AGGARG, D_CLEAR_AGGBAD)},
	FuncCommit:            {Name: "commit", Kind: Action, class: actCommit, Proto: "void(int)"},
	FuncCopyin:            {Name: "copyin", Kind: Subroutine, Proto: "void *(uintptr_t, size_t)", alloca: true, after: scratchSizeRule(1)},
	FuncCopyinstr:         {Name: "copyinstr", Kind: Subroutine, Proto: "string(uintptr_t, [size_t])"},
	FuncCopyinto:          {Name: "copyinto", Kind: Subroutine, Proto: "void(uintptr_t, size_t, void *)", after: allocaArgRule(2)},
	FuncCopyout:           {Name: "copyout", Kind: Subroutine, class: actDestruct, Proto: "void(void *, uintptr_t, size_t)"},
	FuncCopyoutstr:        {Name: "copyoutstr", Kind: Subroutine, class: actDestruct, Proto: "void(char *, uintptr_t, size_t)"},
	FuncCount:             {Name: "count", Kind: AggFunc, Proto: "void()"},
	FuncDPath:             {Name: "d_path", Kind: Subroutine, Proto: "string(vmlinux`struct path *)", attr: &evolvingAttr},
	FuncDdiPathname:       {Name: "ddi_pathname", Kind: Subroutine, Proto: "string(void *, int64_t)", attr: &evolvingAttr},
	FuncDenormalize:       {Name: "denormalize", Kind: Action, class: actData, Proto: "void(@)", before: aggArgRule(D_NORMALIZE_AGGARG, D_NORMALIZE_AGGBAD)},
	FuncDirname:           {Name: "dirname", Kind: Subroutine, Proto: "string(const char *)"},
	FuncDiscard:           {Name: "discard", Kind: Action, class: actDiscard, Proto: "void(int)"},
	FuncExit:              {Name: "exit", Kind: Action, class: actExit, Proto: "void(int)"},
	FuncFlowFork:          {Name: "__flow_fork", Kind: Subroutine, Proto: "void(int64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowExit:          {Name: "__flow_exit", Kind: Subroutine, Proto: "void()", attr: &evolvingAttr, unlexed: true},
	FuncNewflow:           {Name: "newflow", Kind: Subroutine, Proto: "void()", attr: &evolvingAttr, unlexed: true},
	FuncFlowRecv:          {Name: "__flow_recv", Kind: Subroutine, Proto: "void(uint64_t, int64_t, int, uint64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowSend:          {Name: "__flow_send", Kind: Subroutine, Proto: "int64_t(uint64_t, int64_t, uint64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowSent:          {Name: "__flow_sent", Kind: Subroutine, Proto: "void(uint64_t, int64_t, int64_t, int64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowBio:           {Name: "__flow_bio", Kind: Subroutine, Proto: "void(uint64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowBioDone:       {Name: "__flow_bio_done", Kind: Subroutine, Proto: "void(uint64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFlowIO:            {Name: "__flow_io", Kind: Subroutine, Proto: "void(uint64_t)", attr: &evolvingAttr, unlexed: true},
	FuncFreopen:           {Name: "freopen", Kind: Action, class: actDestruct, Proto: "void(@, ...)", Since: version(1, 1, 0), after: (*checker).checkPrintf},
	FuncFtruncate:         {Name: "ftruncate", Kind: Action, class: actData, Proto: "void()"},
	FuncFunc:              {Name: "func", Kind: Action, class: actData, Proto: "_symaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncGetf:              {Name: "getf", Kind: Subroutine, Proto: "vmlinux`struct file *(int)", Since: version(1, 10, 0), unlexed: true},
	FuncGetmajor:          {Name: "getmajor", Kind: Subroutine, Proto: "vmlinux`dev_t(vmlinux`dev_t)", attr: &evolvingAttr},
	FuncGetminor:          {Name: "getminor", Kind: Subroutine, Proto: "vmlinux`dev_t(vmlinux`dev_t)", attr: &evolvingAttr},
	FuncHtonl:             {Name: "htonl", Kind: Subroutine, Proto: "uint32_t(uint32_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncHtonll:            {Name: "htonll", Kind: Subroutine, Proto: "uint64_t(uint64_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncHtons:             {Name: "htons", Kind: Subroutine, Proto: "uint16_t(uint16_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncIndex:             {Name: "index", Kind: Subroutine, Proto: "int(const char *, const char *, [int])", Since: version(1, 1, 0)},
	FuncInetNtoa:          {Name: "inet_ntoa", Kind: Subroutine, Proto: "string(ipaddr_t *)", Since: version(1, 5, 0)},
	FuncInetNtoa6:         {Name: "inet_ntoa6", Kind: Subroutine, Proto: "string(vmlinux`struct in6_addr *, [int])", Since: version(1, 5, 0), after: (*checker).inetNtoa6Rule},
	FuncInetNtop:          {Name: "inet_ntop", Kind: Subroutine, Proto: "string(int, void *)", Since: version(1, 5, 0)},
	FuncJSON:              {Name: "json", Kind: Subroutine, Proto: "string(const char *, const char *)", Since: version(1, 11, 0), unlexed: true},
	FuncJstack:            {Name: "jstack", Kind: Action, class: actData, Proto: "stack([uint32_t], [uint32_t])", after: (*checker).ustackRule},
	FuncLinkNtop:          {Name: "link_ntop", Kind: Subroutine, Proto: "string(int, void *)", Since: version(1, 5, 0)},
	FuncLlquantize:        {Name: "llquantize", Kind: AggFunc, Proto: "void(@, int32_t, int32_t, int32_t, int32_t, ...)", Since: version(1, 6, 4), scalarArg: true, incrArg: 6, params: (*checker).llquantizeParams},
	FuncLltostr:           {Name: "lltostr", Kind: Subroutine, Proto: "string(int64_t, [int])"},
	FuncLquantize:         {Name: "lquantize", Kind: AggFunc, Proto: "void(@, int32_t, int32_t, ...)", scalarArg: true, incrArg: 5, params: (*checker).lquantizeParams},
	FuncMax:               {Name: "max", Kind: AggFunc, Proto: "void(@)", scalarArg: true},
	FuncMin:               {Name: "min", Kind: AggFunc, Proto: "void(@)", scalarArg: true},
	FuncMod:               {Name: "mod", Kind: Action, class: actData, Proto: "_symaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncMsgdsize:          {Name: "msgdsize", Kind: Subroutine, Proto: "size_t(mblk_t *)"},
	FuncMsgsize:           {Name: "msgsize", Kind: Subroutine, Proto: "size_t(mblk_t *)"},
	FuncMutexOwned:        {Name: "mutex_owned", Kind: Subroutine, Proto: "int(vmlinux`struct mutex *)", attr: &evolvingAttr},
	FuncMutexOwner:        {Name: "mutex_owner", Kind: Subroutine, Proto: "vmlinux`struct task_struct *(vmlinux`struct mutex *)", attr: &evolvingAttr},
	FuncMutexTypeAdaptive: {Name: "mutex_type_adaptive", Kind: Subroutine, Proto: "int(vmlinux`struct mutex *)", attr: &evolvingAttr},
	FuncMutexTypeSpin:     {Name: "mutex_type_spin", Kind: Subroutine, Proto: "int(vmlinux`struct mutex *)", attr: &evolvingAttr},
	FuncNtohl:             {Name: "ntohl", Kind: Subroutine, Proto: "uint32_t(uint32_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncNtohll:            {Name: "ntohll", Kind: Subroutine, Proto: "uint64_t(uint64_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncNtohs:             {Name: "ntohs", Kind: Subroutine, Proto: "uint16_t(uint16_t)", Since: version(1, 3, 0), attr: &evolvingAttr},
	FuncNormalize:         {Name: "normalize", Kind: Action, class: actData, Proto: "void(@, uint64_t)", before: normalizeRule},
	FuncPanic:             {Name: "panic", Kind: Action, class: actDestruct, Proto: "void()", unlexed: true},
	FuncPcap:              {Name: "pcap", Kind: Action, class: actData, Proto: "void(void *, int)", Since: version(1, 6, 4)},
	FuncPrinta:            {Name: "printa", Kind: Action, class: actData, Proto: "void(@, ...)", after: (*checker).printaRule},
	FuncPrintf:            {Name: "printf", Kind: Action, class: actData, Proto: "void(string, ...)", after: (*checker).checkPrintf},
	FuncPrint:             {Name: "print", Kind: Action, class: actData, Proto: "void(@)", Since: version(2, 0, 0), before: (*checker).printRule},
	FuncProgenyof:         {Name: "progenyof", Kind: Subroutine, Proto: "int(pid_t)", Lib: "procfs.d"},
	FuncQuantize:          {Name: "quantize", Kind: AggFunc, Proto: "void(@, ...)", scalarArg: true, incrArg: 2},
	FuncRaise:             {Name: "raise", Kind: Action, class: actDestruct, Proto: "void(int)"},
	FuncRand:              {Name: "rand", Kind: Subroutine, Proto: "int()"},
	FuncRindex:            {Name: "rindex", Kind: Subroutine, Proto: "int(const char *, const char *, [int])", Since: version(1, 1, 0)},
	FuncRwIswriter:        {Name: "rw_iswriter", Kind: Subroutine, Proto: "int(vmlinux`rwlock_t *)", attr: &evolvingAttr},
	FuncRwReadHeld:        {Name: "rw_read_held", Kind: Subroutine, Proto: "int(vmlinux`rwlock_t *)", attr: &evolvingAttr},
	FuncRwWriteHeld:       {Name: "rw_write_held", Kind: Subroutine, Proto: "int(vmlinux`rwlock_t *)", attr: &evolvingAttr},
	FuncSetopt:            {Name: "setopt", Kind: Action, class: actData, Proto: "void(const char *, [const char *])", Since: version(1, 2, 0)},
	FuncSpeculate:         {Name: "speculate", Kind: Action, class: actSpeculate, Proto: "void(int)"},
	FuncSpeculation:       {Name: "speculation", Kind: Subroutine, Proto: "int()"},
	FuncStack:             {Name: "stack", Kind: Action, class: actData, Proto: "stack([uint32_t])", after: (*checker).stackRule},
	FuncStddev:            {Name: "stddev", Kind: AggFunc, Proto: "void(@)", Since: version(1, 6, 0), scalarArg: true},
	FuncStop:              {Name: "stop", Kind: Action, class: actDestruct, Proto: "void()"},
	FuncSnapshot:          {Name: "snapshot", Kind: Action, class: actData, Proto: "void([int])", unlexed: true},
	FuncStrchr:            {Name: "strchr", Kind: Subroutine, Proto: "string(const char *, char)", Since: version(1, 1, 0)},
	FuncStrlen:            {Name: "strlen", Kind: Subroutine, Proto: "size_t(const char *)"},
	FuncStrjoin:           {Name: "strjoin", Kind: Subroutine, Proto: "string(const char *, const char *)"},
	FuncStrrchr:           {Name: "strrchr", Kind: Subroutine, Proto: "string(const char *, char)", Since: version(1, 1, 0)},
	FuncStrstr:            {Name: "strstr", Kind: Subroutine, Proto: "string(const char *, const char *)", Since: version(1, 1, 0)},
	FuncStrtok:            {Name: "strtok", Kind: Subroutine, Proto: "string(const char *, const char *)", Since: version(1, 1, 0)},
	FuncStrtoll:           {Name: "strtoll", Kind: Subroutine, Proto: "int64_t(const char *, [int])", Since: version(1, 11, 0), unlexed: true},
	FuncSubstr:            {Name: "substr", Kind: Subroutine, Proto: "string(const char *, int, [int])", Since: version(1, 1, 0)},
	FuncSum:               {Name: "sum", Kind: AggFunc, Proto: "void(@)", scalarArg: true},
	FuncSym:               {Name: "sym", Kind: Action, class: actData, Proto: "_symaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncSystem:            {Name: "system", Kind: Action, class: actDestruct, Proto: "void(@, ...)", after: (*checker).checkPrintf},
	FuncTolower:           {Name: "tolower", Kind: Subroutine, Proto: "string(const char *)", Since: version(1, 8, 0), unlexed: true},
	FuncToupper:           {Name: "toupper", Kind: Subroutine, Proto: "string(const char *)", Since: version(1, 8, 0), unlexed: true},
	FuncTrace:             {Name: "trace", Kind: Action, class: actData, Proto: "void(@)", before: (*checker).traceRule},
	FuncTracemem:          {Name: "tracemem", Kind: Action, class: actData, Proto: "void(@, size_t, [size_t])", after: (*checker).tracememRule},
	FuncTraceoff:          {Name: "traceoff", Kind: Action, class: actData, Proto: "void([int])", unlexed: true},
	FuncTraceon:           {Name: "traceon", Kind: Action, class: actData, Proto: "void()", unlexed: true},
	FuncTrunc:             {Name: "trunc", Kind: Action, class: actData, Proto: "void(@, [int64_t])", before: aggArgRule(D_TRUNC_AGGARG, D_TRUNC_AGGBAD)},
	FuncUaddr:             {Name: "uaddr", Kind: Action, class: actData, Proto: "_usymaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncUfunc:             {Name: "ufunc", Kind: Action, class: actData, Proto: "_usymaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncUmod:              {Name: "umod", Kind: Action, class: actData, Proto: "_usymaddr(uintptr_t)", Since: version(1, 2, 0)},
	FuncUstack:            {Name: "ustack", Kind: Action, class: actData, Proto: "stack([uint32_t], [uint32_t])", after: (*checker).ustackRule},
	FuncUsym:              {Name: "usym", Kind: Action, class: actData, Proto: "_usymaddr(uintptr_t)", Since: version(1, 2, 0)},
}

// VarID identifies a builtin variable: a row of the variable table.
type VarID int

// Builtin variable IDs, one per row of the variable table.
const (
	VarNone VarID = iota
	VarArg0
	VarArg1
	VarArg2
	VarArg3
	VarArg4
	VarArg5
	VarArg6
	VarArg7
	VarArg8
	VarArg9
	VarArgs
	VarUregs
	VarCaller
	VarCurcpu
	VarCurthread
	VarCgroupid // beyond DTrace: the id of zonename's cgroup
	VarEpid
	VarErrno
	VarExecname
	VarFlowid
	VarGid
	VarId
	VarIpl
	VarPid
	VarPpid
	VarProbefunc
	VarProbemod
	VarProbename
	VarProbeprov
	VarStackdepth
	VarTid
	VarTimestamp
	VarUcaller
	VarUid
	VarUstackdepth
	VarVtimestamp
	VarWalltimestamp
	VarZonename

	// NumVarIDs is one more than the largest VarID.
	NumVarIDs
)

// VarDef is a row of the variable table.
type VarDef struct {
	ID   VarID
	Name string
	// Type is the type as dtrace declares it (dt_open.c); kernel types
	// are written "vmlinux`T". Empty for the arrays.
	Type string
	// Since is the D version that introduced the variable (0: 1.0).
	Since uint32
	// Lib names the D library file that defines the variable's type or
	// value, which a program naming it needs (dlib.Needed); "" for none.
	Lib string

	array   bool                     // args[] and uregs[], which are indexed
	unlexed bool                     // see FuncDef.unlexed
	elem    types.Type               // an array's element type
	attr    *Attr                    // the attributes, when not Stable/Stable/Common
	context func(ProviderAttrs) Attr // the attributes it takes from the probe's provider
}

// varTable is the table of builtin variables, indexed by VarID.
var varTable = [NumVarIDs]VarDef{
	// VarArg0 to VarArg9: filled in by init.
	VarArgs:          {Name: "args", array: true, elem: types.Int64, context: func(pa ProviderAttrs) Attr { return pa.Args }},
	VarUregs:         {Name: "uregs", array: true, elem: types.Uint64},
	VarCaller:        {Name: "caller", Type: "uintptr_t"},
	VarCurcpu:        {Name: "curcpu", Type: "cpuinfo_t *", Lib: "sched.d"},
	VarCurthread:     {Name: "curthread", Type: "vmlinux`struct task_struct *", attr: &Attr{Stable, Private, ClassCommon}},
	VarEpid:          {Name: "epid", Type: "uint64_t"},
	VarErrno:         {Name: "errno", Type: "int"},
	VarExecname:      {Name: "execname", Type: "string"},
	VarFlowid:        {Name: "flowid", Type: "uint64_t", attr: &evolvingAttr, unlexed: true},
	VarGid:           {Name: "gid", Type: "gid_t"},
	VarId:            {Name: "id", Type: "uint_t"},
	VarIpl:           {Name: "ipl", Type: "uint_t"},
	VarPid:           {Name: "pid", Type: "pid_t"},
	VarPpid:          {Name: "ppid", Type: "pid_t", Lib: "procfs.d"},
	VarProbefunc:     {Name: "probefunc", Type: "string", context: func(pa ProviderAttrs) Attr { return pa.Function }},
	VarProbemod:      {Name: "probemod", Type: "string", context: func(pa ProviderAttrs) Attr { return pa.Module }},
	VarProbename:     {Name: "probename", Type: "string", context: func(pa ProviderAttrs) Attr { return pa.Name }},
	VarProbeprov:     {Name: "probeprov", Type: "string", context: func(pa ProviderAttrs) Attr { return pa.Provider }},
	VarStackdepth:    {Name: "stackdepth", Type: "uint32_t"},
	VarTid:           {Name: "tid", Type: "id_t"},
	VarTimestamp:     {Name: "timestamp", Type: "uint64_t"},
	VarUcaller:       {Name: "ucaller", Type: "uint64_t", Since: version(1, 2, 0)},
	VarUid:           {Name: "uid", Type: "uid_t"},
	VarUstackdepth:   {Name: "ustackdepth", Type: "uint32_t", Since: version(1, 2, 0)},
	VarVtimestamp:    {Name: "vtimestamp", Type: "uint64_t"},
	VarWalltimestamp: {Name: "walltimestamp", Type: "int64_t"},
	VarZonename:      {Name: "zonename", Type: "string", Lib: "container.d", unlexed: true},
	VarCgroupid:      {Name: "cgroupid", Type: "uint64_t", Lib: "container.d", attr: &evolvingAttr, unlexed: true},
}

// funcsByName and varsByName index funcTable and varTable by name.
var (
	funcsByName map[string]*FuncDef
	varsByName  map[string]*VarDef
)

func init() {
	// arg0 to arg9 differ only by their number.
	for i := VarArg0; i <= VarArg9; i++ {
		varTable[i] = VarDef{Name: "arg" + strconv.Itoa(int(i-VarArg0)), Type: "int64_t"}
	}
	funcsByName = indexRows(funcTable[:], func(d *FuncDef, id int) string { d.ID = FuncID(id); return d.Name })
	varsByName = indexRows(varTable[:], func(d *VarDef, id int) string { d.ID = VarID(id); return d.Name })
}

// LookupFunc returns the row of the builtin function named name, or nil.
func LookupFunc(name string) *FuncDef { return funcsByName[name] }

// LookupVar returns the row of the builtin variable named name, or nil.
func LookupVar(name string) *VarDef { return varsByName[name] }

// FuncByID returns the row of the function table with the given ID, or
// nil.
func FuncByID(id FuncID) *FuncDef { return rowByID(funcTable[:], int(id)) }

// VarByID returns the row of the variable table with the given ID, or
// nil.
func VarByID(id VarID) *VarDef { return rowByID(varTable[:], int(id)) }

// indexRows indexes by name the rows of a builtin table, whose index in
// the table is the row's ID; ident records the ID in the row and returns
// its name. Unused rows (no name, as row 0) are left out.
func indexRows[R any](rows []R, ident func(r *R, id int) string) map[string]*R {
	m := make(map[string]*R, len(rows))
	for i := range rows {
		if name := ident(&rows[i], i); name != "" {
			m[name] = &rows[i]
		}
	}
	return m
}

// rowByID returns the row of a builtin table with the given ID, or nil
// for ID 0 (none) and IDs out of the table.
func rowByID[R any](rows []R, id int) *R {
	if id <= 0 || id >= len(rows) {
		return nil
	}
	return &rows[id]
}

// BuiltinLib returns the D library file a program naming the builtin
// function or variable name needs, or "".
func BuiltinLib(name string) string {
	if d := LookupFunc(name); d != nil {
		return d.Lib
	}
	if d := LookupVar(name); d != nil {
		return d.Lib
	}
	return ""
}
