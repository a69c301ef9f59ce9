package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtrace-go/dtrace/agent"
	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/output/formats"
)

// Exit statuses of dtrace(1M).
const (
	exitSuccess = 0
	exitError   = 1
	exitUsage   = 2
)

// Modes of operation (dtrace's DMODE_*).
const (
	modeExec = iota
	modeVersion
	modeLink
	modeList
	modeHeader
)

// apiVersion is what -V prints: the D language version we implement.
const apiVersion = dtrace.APIVersion

// productVersion is the "This is DTrace M.m.u" of -vV; scripts parse it.
const productVersion = "2.0.0"

// setters are the options that set one dtrace option of that name; the
// option's argument, if it takes one, is the value.
var setters = map[byte]string{
	'b': "bufsize", 'D': "define", 'F': "flowindent", 'H': "cpphdrs", 'I': "incdir",
	'L': "libdir", 'q': "quiet", 'U': "undef", 'w': "destructive", 'X': "stdc",
}

// specKinds are the options that name probes, and how each reads a bare
// name; -i takes a description, as dtrace's does.
var specKinds = map[byte]dtrace.SpecKind{
	'n': dtrace.SpecName, 'i': dtrace.SpecName, 'P': dtrace.SpecProvider,
	'm': dtrace.SpecModule, 'f': dtrace.SpecFunction,
}

// command is one -s/-n/-P/-m/-f/-i request, in command-line order.
type command struct {
	arg  string
	kind dtrace.SpecKind
	file bool
	prog *dtrace.Program
}

// cmdline is the state of one dtrace invocation.
type cmdline struct {
	pname          string
	arg0           string
	stdin          io.Reader
	stdout, stderr io.Writer
	opts           *dtrace.Options
	operands       []string
	cmds           []*command
	ofile          string // -o
	mode, verbose  int
	execute        bool // enable the programs (not -e, -h, -G)
	compileOnly    bool // -e
	// forward are the options a guest's agent runs the programs with
	// (-x guest), as -x takes them.
	forward []string
}

func (c *cmdline) errorf(format string, a ...any) {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.pname, fmt.Sprintf(format, a...))
}

// warnOptions prints the warnings of the options set so far.
func (c *cmdline) warnOptions() {
	for _, w := range c.opts.Warnings() {
		c.errorf("%s", w)
	}
}

// notice prints a message that -q (or the quiet option) suppresses.
func (c *cmdline) notice(format string, a ...any) {
	if !c.opts.Quiet {
		c.errorf(format, a...)
	}
}

func (c *cmdline) usage() int {
	fmt.Fprintf(c.stderr, usageText, c.pname)
	return exitUsage
}

// run is dtrace(1M): it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cmdline{pname: "dtrace", stdin: stdin, stdout: stdout, stderr: stderr, execute: true}
	// -x core (or its pragma) is acted on as dtrace exits (main).
	defer func() { wantCore = c.opts != nil && c.opts.Core }()
	if len(args) > 0 && args[0] != "" {
		c.arg0, c.pname = args[0], filepath.Base(args[0])
	}
	if len(args) <= 1 {
		return c.usage()
	}
	opts, operands, err := parseArgs(args)
	if err != nil {
		c.errorf("%v", err)
		return c.usage()
	}
	c.operands = operands
	if status, done := c.chooseMode(opts); done {
		return status
	}
	if status, done := c.setOptions(opts); done {
		return status
	}
	if c.opts.Agent != "" {
		return c.serveAgent()
	}
	switch c.mode {
	case modeHeader:
		return c.header()
	case modeLink:
		script := ""
		if c.cmds[0].file {
			script = c.cmds[0].arg
		}
		if err := dtrace.GenerateObject(script, c.ofile, c.operands, c.opts, c.stderr); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		return exitSuccess
	}
	return c.trace(opts)
}

// chooseMode is the first pass over the options: the mode and what
// decides it. -V is done here.
func (c *cmdline) chooseMode(opts []opt) (int, bool) {
	modes := 0
	for _, o := range opts {
		switch o.c {
		case '3', '6':
			if (o.c == '3' && o.arg != "2") || (o.c == '6' && o.arg != "4") {
				c.errorf("illegal option -- %c%s", o.c, o.arg)
				return c.usage(), true
			}
		case 'e':
			c.execute, c.compileOnly = false, true
		case 'h', 'G':
			c.mode, c.execute = modeHeader, false
			if o.c == 'G' {
				c.mode = modeLink
			}
			modes++
		case 'l', 'V':
			c.mode = modeList
			if o.c == 'V' {
				c.mode = modeVersion
			}
			modes++
		case 'v':
			c.verbose++
		}
	}
	if modes > 1 {
		c.errorf("only one of the [-GhlV] options can be specified at a time")
		return exitUsage, true
	}
	if c.mode == modeVersion {
		fmt.Fprintf(c.stdout, "%s: %s\n", c.pname, apiVersion)
		if c.verbose > 0 {
			fmt.Fprintf(c.stdout, "This is DTrace %s\n", productVersion)
			fmt.Fprintf(c.stdout, "dtrace(1) version-control ID: %s\n", dtrace.Revision())
		}
		return exitSuccess, true
	}
	return 0, false
}

// setOptions is the second pass: dtrace options, compiler flags and the
// programs to compile.
func (c *cmdline) setOptions(opts []opt) (int, bool) {
	c.opts = dtrace.NewOptions()
	c.opts.SetEnv(os.Environ())
	if c.mode == modeLink || c.mode == modeHeader || c.mode == modeList {
		c.opts.ZDefs = true // -G, -h and -l imply -Z
	}
	if c.mode == modeLink {
		_ = c.opts.Set("linkmode", "dynamic")
		_ = c.opts.Set("unodefs", "")
	}
	buffered := false
	for _, o := range opts {
		what := "-" + string(o.c)
		if takesArg(o.c) {
			what += " " + o.arg
		}
		var err error
		switch o.c {
		case 'B':
			buffered = true
		case 'C':
			c.opts.CPP = true
		case 'o':
			c.ofile = o.arg
		case 'S':
			c.opts.Verbose = true
		case 'x':
			name, _, _ := strings.Cut(o.arg, "=")
			what, err = "-x "+name, c.opts.SetArg(o.arg)
			if forwarded(name) {
				c.forward = append(c.forward, o.arg)
			}
		case 'Z':
			c.opts.ZDefs = true
		case 's':
			c.cmds = append(c.cmds, &command{arg: o.arg, kind: dtrace.SpecProgram, file: true})
		default:
			if name, ok := setters[o.c]; ok {
				err = c.opts.Set(name, o.arg)
				if o.arg != "" {
					name += "=" + o.arg
				}
				c.forward = append(c.forward, name)
			} else if kind, ok := specKinds[o.c]; ok {
				c.cmds = append(c.cmds, &command{arg: o.arg, kind: kind})
			}
		}
		if err != nil {
			c.errorf("failed to set %s: %v", what, err)
			return exitError, true
		}
	}
	c.warnOptions()
	if err := c.opts.CheckOutputs(); err != nil {
		c.errorf("failed to set %v", err)
		return exitError, true
	}
	switch {
	case buffered && c.mode != modeExec:
		c.errorf("-B not valid in combination with [-Gl] options")
	case buffered && c.ofile != "":
		c.errorf("-B not valid in combination with -o option")
	case c.mode == modeLink && len(c.cmds) == 0:
		c.errorf("-G requires one or more scripts or enabling options")
	case c.mode == modeHeader && len(c.cmds) == 0:
		c.errorf("-h requires one or more scripts or enabling options")
	default:
		return 0, false
	}
	return exitUsage, true
}

// header is dtrace -h: a C header of each script's provider definitions.
func (c *cmdline) header() int {
	for _, cmd := range c.cmds {
		if !cmd.file {
			c.errorf("-h requires scripts (-s) holding provider definitions")
			return exitUsage
		}
		if err := dtrace.GenerateHeader(cmd.arg, c.ofile); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	return exitSuccess
}

// trace creates or grabs the processes, opens the library, compiles the
// programs and lists their probes (-l) or enables them and traces.
func (c *cmdline) trace(opts []opt) int {
	_, testing := os.LookupEnv("_DTRACE_TESTING")
	c.opts.QuietResize = c.opts.QuietResize || testing
	// Tracing needs the kernel; compiling alone (-e) does not.
	if c.execute || c.mode == modeList {
		if err := kernel.CheckPrivileges(); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}
	procs, err := c.processes(opts)
	defer func() {
		for _, p := range procs {
			p.Abandon()
		}
	}()
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	conf := dtrace.Config{Testing: testing, Stderr: c.stderr}
	if len(procs) > 0 {
		conf.Target = procs[0].Pid()
	}
	h, err := dtrace.Open(c.opts, conf)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "failed to initialize dtrace") {
			err = fmt.Errorf("failed to initialize dtrace: %w", err)
		}
		c.errorf("%v", err)
		return exitError
	}
	defer h.Close()
	for _, cmd := range c.cmds {
		src := dtrace.Source{Name: cmd.arg, Text: cmd.arg, Kind: cmd.kind, MacroArgs: append([]string{c.arg0}, c.operands...)}
		if cmd.file {
			src, err = h.ReadScript(cmd.arg, c.stdin, c.operands)
		}
		if err == nil {
			cmd.prog, err = h.Compile(src)
		}
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		c.warnOptions() // set by the program's pragmas
	}
	if c.mode == modeExec {
		// dtrace compiles its ERROR clause here: -x tree shows it.
		if err := h.DumpErrorProgramTrees(); err != nil {
			c.errorf("failed to establish error handler: %v", err)
			return exitError
		}
	}
	if err := kernel.SetLockMem(c.opts.LockMem); err != nil {
		c.errorf("warning: could not set lockmem: %v", err)
	}
	out := c.stdout
	if c.ofile != "" {
		f, err := dtrace.OpenOutput(c.ofile, c.opts.OFormat)
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer f.Close()
		out = f
	}
	if c.mode == modeList {
		return c.list(h, out)
	}
	return c.enable(h, out, procs)
}

// processes creates (-c) or grabs (-p) the processes to trace, in order;
// on an error it returns those it has.
func (c *cmdline) processes(opts []opt) ([]*dtrace.Process, error) {
	var procs []*dtrace.Process
	for _, o := range opts {
		if o.c == 'c' || o.c == 'p' {
			p, err := c.opts.StartProcess(o.c == 'c', o.arg, c.stdin, c.stdout, c.stderr)
			if err != nil {
				return procs, err
			}
			procs = append(procs, p)
		}
	}
	return procs, nil
}

// list is -l: the probes each program matches, or every probe.
func (c *cmdline) list(h *dtrace.Handle, out io.Writer) int {
	dtrace.WriteListHeader(out)
	if len(c.cmds) == 0 {
		c.cmds = []*command{{}} // no program: every probe
	}
	listed, unmatched := 0, false
	for _, cmd := range c.cmds {
		n, err := h.WriteList(out, cmd.prog, c.verbose > 0)
		listed += n
		var none *dtrace.NoMatchError
		if errors.As(err, &none) {
			// A description that matches nothing is reported, and
			// the listing goes on to the next, as dtrace(1M) does.
			for _, d := range none.Descs {
				c.errorf("failed to match %s: No probe matches description", d)
			}
			unmatched = true
		} else if err != nil {
			c.errorf("%v", err)
		}
	}
	// Issue 21 asks that a listing whose descriptions match nothing
	// exit 1, as grep does when it finds nothing; dtrace-utils and
	// illumos exit 0 there (dtrace-util/tst.ListProbesModuleEmpty and
	// tst.InvalidId1 pin that). A listing that printed any probe still
	// exits 0 (tst.InvalidId3).
	if unmatched && listed == 0 {
		return exitError
	}
	return exitSuccess
}

// enable reports what the programs matched, then (but for -e) starts
// tracing and runs it to its end.
func (c *cmdline) enable(h *dtrace.Handle, out io.Writer, procs []*dtrace.Process) int {
	total := 0
	for _, cmd := range c.cmds {
		p := cmd.prog
		if c.execute {
			c.notice("%s '%s' matched %d probe%s", p.Source.Noun(), p.Source.Label(), p.Matches, plural(p.Matches))
		}
		if c.verbose > 0 && h.Structured() {
			p.WriteStability(c.stderr, c.execute)
		} else if c.verbose > 0 {
			p.WriteStability(out, c.execute)
		}
		total += p.Matches
	}
	if c.compileOnly {
		return exitSuccess
	}
	if total == 0 && !c.opts.ZDefs {
		if len(c.cmds) > 0 {
			c.errorf("no probes matched")
		} else {
			c.errorf("no probes specified")
		}
		return exitError
	}
	rc, stopSignals := dtrace.SignalRunConfig(procs)
	defer stopSignals()
	if f := formats.Streaming(c.opts.OFormat); len(c.opts.Guests) > 0 && (f == nil || !f.Guests) {
		c.errorf("-x guest works with %s output only", guestFormats())
		return exitError
	}
	if err := h.GoContext(dtrace.EnablingContext(&rc)); err != nil {
		c.errorf("could not enable tracing: %v", err)
		return exitError
	}
	// The guests start once the host traces: what they make the host
	// do is seen.
	var gs *agent.Host
	if len(c.opts.Guests) > 0 {
		var err error
		if gs, err = c.startGuests(); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		defer gs.Stop()
	}
	if c.opts.Destructive {
		c.notice("allowing destructive actions")
	}
	if gs != nil {
		out = gs.Run(h.Timeline(), out)
		rc.Aggregations = gs.Merge
	}
	status, err := h.Run(out, rc)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	return status
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
