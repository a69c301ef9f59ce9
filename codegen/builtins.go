package codegen

import (
	"github.com/cilium/ebpf/asm"
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file picks the generator of a builtin function. The functions are
// the rows of check's function table (check.LookupFunc); funcGens holds,
// by the row's FuncID, how codegen compiles a call of each. A function
// without an entry here fails to compile ("not supported yet").

// funcGen is how codegen compiles calls of one builtin function.
type funcGen struct {
	// value compiles a call whose value is used (a subroutine). nil for
	// an action, whose value is 0.
	value func(f *fn, c *syntax.CallExpr, name string) asm.Register
	// stmt compiles an action: a call that is a whole statement, or
	// whose value is used when value is nil. It writes record items
	// with the consumer action act.
	stmt func(f *fn, c *syntax.CallExpr, name string, act program.Action)
	act  program.Action
	// kind is the value kind of a symbol subroutine's result (sym(),
	// usym(), ...): the consumer symbolizes the address.
	kind program.ValueKind
}

// funcGens are the generators of the builtin functions, by FuncID.
var funcGens [check.NumFuncIDs]funcGen

func init() {
	sym := func(act program.Action, kind program.ValueKind) funcGen {
		return funcGen{value: (*fn).subrSymAddr, stmt: (*fn).actionSym, act: act, kind: kind}
	}
	// A literal would make an initialization cycle: generators compile
	// their arguments, which may be calls.
	funcGens = [check.NumFuncIDs]funcGen{
		// Subroutines.
		check.FuncAlloca:      {value: (*fn).subrAlloca},
		check.FuncBasename:    {value: (*fn).subrPathPart},
		check.FuncBcopy:       {value: (*fn).subrBcopy},
		check.FuncCleanpath:   {value: (*fn).subrCleanpath},
		check.FuncCopyin:      {value: (*fn).subrCopyin},
		check.FuncCopyinstr:   {value: (*fn).subrCopyinstr},
		check.FuncCopyinto:    {value: (*fn).subrCopyinto},
		check.FuncCopyout:     {value: (*fn).subrCopyout},
		check.FuncCopyoutstr:  {value: (*fn).subrCopyout},
		check.FuncDirname:     {value: (*fn).subrPathPart},
		check.FuncDPath:       {value: (*fn).subrDPath},
		check.FuncFlowExit:    {value: (*fn).subrFlowExit},
		check.FuncNewflow:     {value: (*fn).subrFlowExit},
		check.FuncFlowFork:    {value: (*fn).subrFlowFork},
		check.FuncFlowRecv:    {value: (*fn).subrFlowRecv},
		check.FuncFlowSend:    {value: (*fn).subrFlowSend},
		check.FuncFlowSent:    {value: (*fn).subrFlowSent},
		check.FuncFlowBio:     {value: (*fn).subrFlowBio},
		check.FuncFlowBioDone: {value: (*fn).subrFlowBioDone},
		check.FuncFlowIO:      {value: (*fn).subrFlowIO},
		check.FuncGetf:        {value: (*fn).subrGetf},
		check.FuncGetmajor:    {value: (*fn).subrDevPart},
		check.FuncGetminor:    {value: (*fn).subrDevPart},
		check.FuncHtonl:       {value: (*fn).subrByteOrder},
		check.FuncHtonll:      {value: (*fn).subrByteOrder},
		check.FuncHtons:       {value: (*fn).subrByteOrder},
		check.FuncIndex:       {value: (*fn).subrSearch},
		check.FuncInetNtoa:    {value: (*fn).subrInetNtoa},
		check.FuncInetNtoa6:   {value: (*fn).subrInetNtoa6},
		check.FuncInetNtop:    {value: (*fn).subrInetNtop},
		check.FuncJSON:        {value: (*fn).subrJSON},
		check.FuncLinkNtop:    {value: (*fn).subrLinkNtop},
		check.FuncLltostr:     {value: (*fn).subrLltostr},
		check.FuncNtohl:       {value: (*fn).subrByteOrder},
		check.FuncNtohll:      {value: (*fn).subrByteOrder},
		check.FuncNtohs:       {value: (*fn).subrByteOrder},
		check.FuncProgenyof:   {value: (*fn).subrProgenyof},
		check.FuncCgrouppath:  {value: (*fn).subrCgrouppath},
		check.FuncRand:        {value: (*fn).subrRand},
		check.FuncRindex:      {value: (*fn).subrSearch},
		check.FuncSpeculation: {value: (*fn).subrSpeculation},
		check.FuncStrchr:      {value: (*fn).subrStrchr},
		check.FuncStrjoin:     {value: (*fn).subrStrjoin},
		check.FuncStrlen:      {value: (*fn).subrStrlen},
		check.FuncStrrchr:     {value: (*fn).subrStrchr},
		check.FuncStrstr:      {value: (*fn).subrSearch},
		check.FuncStrtok:      {value: (*fn).subrStrjoin},
		check.FuncStrtoll:     {value: (*fn).subrStrtoll},
		check.FuncSubstr:      {value: (*fn).subrSubstr},
		check.FuncTolower:     {value: (*fn).subrCase},
		check.FuncToupper:     {value: (*fn).subrCase},

		// Linux's struct mutex (mutex.go).
		check.FuncMutexOwned:        {value: (*fn).subrMutex},
		check.FuncMutexOwner:        {value: (*fn).subrMutex},
		check.FuncMutexTypeAdaptive: {value: (*fn).subrMutex},
		check.FuncMutexTypeSpin:     {value: (*fn).subrMutex},
		check.FuncRwIswriter:        {value: (*fn).subrRw},
		check.FuncRwReadHeld:        {value: (*fn).subrRw},
		check.FuncRwWriteHeld:       {value: (*fn).subrRw},

		// Symbol subroutines: the value is the address; as a statement,
		// the action that traces the symbol.
		check.FuncSym:   sym(program.ActSym, program.KindSym),
		check.FuncFunc:  sym(program.ActSym, program.KindSym),
		check.FuncMod:   sym(program.ActMod, program.KindMod),
		check.FuncUsym:  sym(program.ActUSym, program.KindUSym),
		check.FuncUfunc: sym(program.ActUSym, program.KindUSym),
		check.FuncUmod:  sym(program.ActUMod, program.KindUMod),
		check.FuncUaddr: sym(program.ActUSym, program.KindUAddr),

		// Aggregating functions (agg.go).
	}
	// Actions (actions.go).
	for id, g := range actionGens() {
		funcGens[id] = g
	}
}

// funcGenOf returns the generator of the builtin function named name,
// or nil when there is no such function.
func funcGenOf(name string) *funcGen {
	d := check.LookupFunc(name)
	if d == nil {
		return nil
	}
	return &funcGens[d.ID]
}

// callGen returns the generator of the function call c calls, or nil.
func callGen(c *syntax.CallExpr) (*funcGen, string) {
	id, ok := c.Fun.(*syntax.Ident)
	if !ok {
		return nil, ""
	}
	return funcGenOf(id.Name), id.Name
}

// callExpr compiles a call whose value is used.
func (f *fn) callExpr(c *syntax.CallExpr) asm.Register {
	if _, ok := c.Fun.(*syntax.Ident); !ok {
		f.fail(c, "called object is not a function")
	}
	g, name := callGen(c)
	switch {
	case g != nil && g.value != nil:
		return g.value(f, c, name)
	case g != nil && g.stmt != nil:
		// An action used as an expression has the value 0 (void).
		g.stmt(f, c, name, g.act)
		return f.zero()
	}
	f.fail(c, "subroutine %s( ) is not supported yet", name)
	return 0
}

// action compiles a call statement that is an action; it reports false
// for subroutines, which compile as expressions.
func (f *fn) action(c *syntax.CallExpr) bool {
	g, name := callGen(c)
	if g == nil || g.stmt == nil {
		return false
	}
	g.stmt(f, c, name, g.act)
	return true
}

// symAction tells which symbol action traces the result of sym(),
// func(), mod(), usym(), ufunc(), umod() or uaddr().
func symAction(e syntax.Expr) program.Action {
	if c, ok := syntax.Unparen(e).(*syntax.CallExpr); ok {
		if g, _ := callGen(c); g != nil && g.kind != program.KindNone {
			return g.act
		}
	}
	return program.ActNone
}

// symKind returns the value kind of the result of a symbol subroutine
// call (sym(), usym(), ...), or KindNone for any other expression.
func symKind(e syntax.Expr) program.ValueKind {
	if c, ok := syntax.Unparen(e).(*syntax.CallExpr); ok {
		if g, _ := callGen(c); g != nil {
			return g.kind
		}
	}
	return program.KindNone
}

// varGen is how codegen compiles uses of one builtin variable.
type varGen struct {
	// load compiles a use of the variable's value (vars.go).
	load func(f *fn, e syntax.Expr, name string) asm.Register
	// index compiles the variable indexed (args[], uregs[]).
	index func(f *fn, e *syntax.IndexExpr) asm.Register
	// strBound is the most bytes, with the NUL, a string variable's value
	// has (0: strsize), which narrows aggregation keys (keywidth.go).
	strBound uint32
	// keyInto, when set, stores a string variable into an aggregation
	// key item of width bytes at scratch offset off without a string
	// copy, reporting false when it cannot (keywidth.go).
	keyInto func(f *fn, name string, off, width uint32) bool
}

// varGens are the generators of the builtin variables, by VarID.
var varGens [check.NumVarIDs]varGen

func init() {
	arg := varGen{load: (*fn).varArg}
	probe := varGen{load: (*fn).varProbeName, strBound: abi.ProbeNameSize,
		keyInto: func(f *fn, name string, off, width uint32) bool {
			if width < abi.ProbeNameSize {
				return false
			}
			f.probeNameInto(name, off)
			return true
		}}
	varGens = [check.NumVarIDs]varGen{
		check.VarArg0: arg, check.VarArg1: arg, check.VarArg2: arg, check.VarArg3: arg, check.VarArg4: arg,
		check.VarArg5: arg, check.VarArg6: arg, check.VarArg7: arg, check.VarArg8: arg, check.VarArg9: arg,
		check.VarCaller:    {load: (*fn).varCaller},
		check.VarCurcpu:    {load: (*fn).varCurcpu},
		check.VarCurthread: {load: (*fn).varCurthread},
		check.VarEpid:      {load: (*fn).varEpid},
		check.VarErrno:     {load: (*fn).varErrno},
		check.VarArgs:      {index: (*fn).argsIndex},
		check.VarExecname: {load: (*fn).varExecname, strBound: taskCommLen,
			keyInto: func(f *fn, _ string, off, _ uint32) bool { f.commInto(off); return true }},
		check.VarFlowid:        {load: (*fn).varFlowid},
		check.VarGid:           {load: halfOf(asm.FnGetCurrentUidGid, false)},
		check.VarId:            {load: (*fn).varID},
		check.VarIpl:           {load: (*fn).varIpl},
		check.VarPid:           {load: halfOf(asm.FnGetCurrentPidTgid, false)},
		check.VarPpid:          {load: (*fn).varPpid},
		check.VarZonename:      {load: cgroupMember("cg_name", "zonename")},
		check.VarCgroupid:      {load: cgroupMember("cg_id", "cgroupid")},
		check.VarProbefunc:     probe,
		check.VarProbemod:      probe,
		check.VarProbename:     probe,
		check.VarProbeprov:     probe,
		check.VarStackdepth:    {load: (*fn).varStackdepth},
		check.VarTid:           {load: halfOf(asm.FnGetCurrentPidTgid, true)},
		check.VarTimestamp:     {load: (*fn).varTimestamp},
		check.VarUcaller:       {load: (*fn).varCaller},
		check.VarUid:           {load: halfOf(asm.FnGetCurrentUidGid, true)},
		check.VarUregs:         {load: (*fn).varUregs, index: (*fn).uregs},
		check.VarUstackdepth:   {load: (*fn).varStackdepth},
		check.VarVtimestamp:    {load: (*fn).varTimestamp},
		check.VarWalltimestamp: {load: (*fn).varWalltimestamp},
	}
}

// varGenOf returns the generator of the builtin variable named name, or
// nil when there is no such variable.
func varGenOf(name string) *varGen {
	d := check.LookupVar(name)
	if d == nil {
		return nil
	}
	return &varGens[d.ID]
}
