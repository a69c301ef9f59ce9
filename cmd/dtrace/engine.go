package main

import (
	"errors"
	"io"

	"github.com/dtrace-go/dtrace/dtrace"
)

// This file is the seam between the command and the library. The command
// needs only the engine interface below; openEngine builds one. Until the
// library facade exists, openEngine returns a stub whose every operation
// fails with errNotImplemented. Plugging the library in means replacing
// openEngine with an adapter over dtrace.Open and friends.

// specKind says how a -n/-P/-m/-f/-i argument is read: which field of a
// probe description a lone name fills. Scripts (-s) use specName.
type specKind int

// Probe specifier kinds, as dtrace's DTRACE_PROBESPEC_*.
const (
	specNone     specKind = iota // -s: a whole program
	specProvider                 // -P
	specModule                   // -m
	specFunc                     // -f
	specName                     // -n and -i
)

// source is one program to compile, from -s or a probe specifier option.
type source struct {
	// Name is the script path (-s) or the specifier text (-n ...).
	Name string
	// Text is the program text, already preprocessed when -C is in effect
	// and with an interpreter line ("#!...") blanked.
	Text string
	// IsFile is true for -s.
	IsFile bool
	// Kind is how a bare specifier is read (specNone for -s).
	Kind specKind
	// Args are the macro arguments: Args[0] is $0 (the script name for -s,
	// the command name otherwise), then the operands $1, $2, ...
	Args []string
	// Lines maps lines of Text back to included files when cpp ran (nil
	// otherwise); see internal/cpp.Result.Lines.
	Lines []lineOrigin
}

// lineOrigin is where one line of a preprocessed program came from.
type lineOrigin struct {
	File string
	Line int
}

// attr is a stability attribute triple as -v prints it.
type attr struct {
	Name, Data, Class string
}

// progInfo describes a compiled or enabled program, for the "matched N
// probes" notice and the -v report.
type progInfo struct {
	Matches  int
	DescAttr attr // minimum probe description attributes
	StmtAttr attr // minimum statement attributes
	// Probes lists the probe descriptions of the program's clauses, in
	// order, one per clause ("provider:module:function:name"), for -v -e.
	Probes []string
}

// probeDesc is one probe as -l lists it.
type probeDesc struct {
	ID                               int
	Provider, Module, Function, Name string
	// Args are the C types of args[0], args[1], ... where the provider
	// knows them (for dtrace -lv).
	Args []string
}

// engineConfig carries what the command knows that the library needs.
type engineConfig struct {
	// Testing is true when _DTRACE_TESTING is set: the default output
	// omits the CPU and ID columns.
	Testing bool
	// Target is the pid of the first -c or -p process ($target), or 0.
	Target int
	// Stderr receives run-time error and drop messages, each a whole line
	// starting with "dtrace: ".
	Stderr io.Writer
}

// program is a compiled program; only the engine looks inside.
type program interface{}

// engine is what the command needs from the library.
type engine interface {
	// Compile compiles one program. Errors print as
	// "dtrace: failed to compile script NAME: " + err (or
	// "dtrace: invalid probe specifier NAME: " + err), so err carries
	// the compiler's message ("[D_TAG] line N: ..." under -xerrtags).
	// Pragmas update the *dtrace.Options given to openEngine.
	Compile(src source) (program, error)
	// Info describes a compiled program without enabling it (-e).
	Info(p program) progInfo
	// Exec enables a program's probes and returns how many matched.
	Exec(p program) (progInfo, error)
	// List returns the probes a program's descriptions match (nil: all
	// probes). The error is printed after "dtrace: ".
	List(p program) ([]probeDesc, error)
	// Go starts tracing (runs BEGIN). Errors print after
	// "dtrace: could not enable tracing: ".
	Go() error
	// Work consumes what is ready, writing output to w, and reports
	// whether tracing is over (exit() was called, or Stop was). It waits at
	// most about one switchrate for data.
	Work(w io.Writer) (done bool, err error)
	// Stop stops tracing (runs END); Work must then be called until done.
	Stop() error
	// ExitStatus is the value given to exit(), or 0.
	ExitStatus() int
	// Close releases everything in the kernel.
	Close() error
}

// errNotImplemented is what the stub engine reports.
var errNotImplemented = errors.New("the D compiler and runtime are not implemented yet")

// openEngine creates the engine for opts. It is a variable so that the
// library adapter (and tests) can replace it.
var openEngine = func(opts *dtrace.Options, cfg engineConfig) (engine, error) {
	return stubEngine{}, nil
}

// stubEngine is the placeholder until the library exists.
type stubEngine struct{}

func (stubEngine) Compile(source) (program, error)   { return nil, errNotImplemented }
func (stubEngine) Info(program) progInfo             { return progInfo{} }
func (stubEngine) Exec(program) (progInfo, error)    { return progInfo{}, errNotImplemented }
func (stubEngine) List(program) ([]probeDesc, error) { return nil, errNotImplemented }
func (stubEngine) Go() error                         { return errNotImplemented }
func (stubEngine) Work(io.Writer) (bool, error)      { return true, errNotImplemented }
func (stubEngine) Stop() error                       { return nil }
func (stubEngine) ExitStatus() int                   { return 0 }
func (stubEngine) Close() error                      { return nil }
