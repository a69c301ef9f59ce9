package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/dtrace-go/dtrace/dtrace"
	"github.com/dtrace-go/dtrace/internal/cpp"
	"github.com/dtrace-go/dtrace/internal/kernel"
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
const apiVersion = "Oracle D 2.0"

// productVersion is the "This is DTrace M.m.u" of -vV; scripts parse it.
const productVersion = "2.0.0"

// environ and checkPrivileges are variables so tests can replace them.
var (
	environ         = os.Environ
	checkPrivileges = kernel.CheckPrivileges
)

// command is one -s/-n/-P/-m/-f/-i request, in command-line order.
type command struct {
	arg   string
	kind  specKind
	file  bool
	desc  string // "script" or "description", for messages
	name  string // as messages quote it
	prog  program
	label string
}

// cmdline is the state of one dtrace invocation.
type cmdline struct {
	pname          string
	stdin          io.Reader
	stdout, stderr io.Writer
	opts           *dtrace.Options
	quiet          bool
}

func (c *cmdline) errorf(format string, a ...any) {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.pname, fmt.Sprintf(format, a...))
}

// notice prints a message that -q (or the quiet option) suppresses.
func (c *cmdline) notice(format string, a ...any) {
	if !c.quiet {
		c.errorf(format, a...)
	}
}

func (c *cmdline) usage() int {
	fmt.Fprintf(c.stderr, usageText, c.pname)
	return exitUsage
}

// run is dtrace(1M): it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := &cmdline{pname: "dtrace", stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 0 && args[0] != "" {
		c.pname = filepath.Base(args[0])
	}
	if len(args) <= 1 {
		return c.usage()
	}
	opts, operands, err := parseArgs(args)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) && ue.msg != "" {
			fmt.Fprintf(stderr, "%s: %s\n", c.pname, ue.msg)
		}
		return c.usage()
	}

	// First pass: the mode and what decides it.
	mode, modes := modeExec, 0
	execute, exitAfterCompile, verbose := true, false, 0
	for _, o := range opts {
		switch o.c {
		case '3', '6':
			if (o.c == '3' && o.arg != "2") || (o.c == '6' && o.arg != "4") {
				fmt.Fprintf(stderr, "%s: illegal option -- %c%s\n", c.pname, o.c, o.arg)
				return c.usage()
			}
		case 'e':
			execute, exitAfterCompile = false, true
		case 'h':
			mode, execute = modeHeader, false
			modes++
		case 'G':
			mode, execute = modeLink, false
			modes++
		case 'l':
			mode = modeList
			modes++
		case 'v':
			verbose++
		case 'V':
			mode = modeVersion
			modes++
		}
	}
	if modes > 1 {
		c.errorf("only one of the [-GhlV] options can be specified at a time")
		return exitUsage
	}
	if mode == modeVersion {
		fmt.Fprintf(stdout, "%s: %s\n", c.pname, apiVersion)
		if verbose > 0 {
			fmt.Fprintf(stdout, "This is DTrace %s\n", productVersion)
			fmt.Fprintf(stdout, "dtrace(1) version-control ID: %s\n", vcsRevision())
		}
		return exitSuccess
	}

	// Second pass: options, compiler flags and the programs to compile.
	c.opts = dtrace.NewOptions()
	c.opts.SetEnv(environ())
	if mode == modeLink || mode == modeHeader || mode == modeList {
		c.opts.ZDefs = true // -G, -h and -l imply -Z
	}
	if mode == modeLink {
		_ = c.opts.Set("linkmode", "dynamic")
		_ = c.opts.Set("unodefs", "")
	}
	var cmds []*command
	var ofile string
	buffered := false
	set := func(name, value, what string) bool {
		if err := c.opts.Set(name, value); err != nil {
			c.errorf("failed to set %s: %v", what, err)
			return false
		}
		return true
	}
	for _, o := range opts {
		ok := true
		switch o.c {
		case 'b':
			ok = set("bufsize", o.arg, "-b "+o.arg)
		case 'B':
			buffered = true
		case 'C':
			c.opts.CPP = true
		case 'D':
			ok = set("define", o.arg, "-D "+o.arg)
		case 'F':
			ok = set("flowindent", "", "-F")
		case 'H':
			ok = set("cpphdrs", "", "-H")
		case 'I':
			ok = set("incdir", o.arg, "-I "+o.arg)
		case 'L':
			ok = set("libdir", o.arg, "-L "+o.arg)
		case 'q':
			ok = set("quiet", "", "-q")
		case 'o':
			ofile = o.arg
		case 'S':
			c.opts.Verbose = true
		case 'U':
			ok = set("undef", o.arg, "-U "+o.arg)
		case 'w':
			ok = set("destructive", "", "-w")
		case 'x':
			name, _, _ := strings.Cut(o.arg, "=")
			if err := c.opts.SetArg(o.arg); err != nil {
				c.errorf("failed to set -x %s: %v", name, err)
				ok = false
			}
		case 'X':
			ok = set("stdc", o.arg, "-X "+o.arg)
		case 'Z':
			c.opts.ZDefs = true
		case 's':
			cmds = append(cmds, &command{arg: o.arg, kind: specNone, file: true, desc: "script"})
		case 'n', 'i':
			cmds = append(cmds, &command{arg: o.arg, kind: specName, desc: "description"})
		case 'P':
			cmds = append(cmds, &command{arg: o.arg, kind: specProvider, desc: "description"})
		case 'm':
			cmds = append(cmds, &command{arg: o.arg, kind: specModule, desc: "description"})
		case 'f':
			cmds = append(cmds, &command{arg: o.arg, kind: specFunc, desc: "description"})
		}
		if !ok {
			return exitError
		}
	}
	if buffered && mode != modeExec {
		c.errorf("-B not valid in combination with [-Gl] options")
		return exitUsage
	}
	if buffered && ofile != "" {
		c.errorf("-B not valid in combination with -o option")
		return exitUsage
	}
	switch {
	case mode == modeLink && len(cmds) == 0:
		c.errorf("-G requires one or more scripts or enabling options")
		return exitUsage
	case mode == modeHeader && len(cmds) == 0:
		c.errorf("-h requires one or more scripts or enabling options")
		return exitUsage
	case mode == modeHeader:
		return c.header(cmds, ofile)
	case mode == modeLink:
		return c.link(cmds, ofile)
	}
	_, testing := os.LookupEnv("_DTRACE_TESTING")
	if testing {
		c.opts.QuietResize = true
	}

	// Tracing needs the kernel; compiling alone (-e) does not.
	if execute || mode == modeList {
		if err := checkPrivileges(); err != nil {
			c.errorf("%v", err)
			return exitError
		}
	}

	// Third pass: processes to create (-c) or grab (-p).
	var victims []*victim
	abandon := func() {
		for _, v := range victims {
			v.abandon()
		}
	}
	defer abandon()
	for _, o := range opts {
		var v *victim
		var err error
		switch o.c {
		case 'c':
			v, err = createProcess(o.arg, stdin, stdout, stderr)
		case 'p':
			v, err = grabProcess(o.arg)
		default:
			continue
		}
		if err != nil {
			c.errorf("%v", err)
			return exitError
		}
		victims = append(victims, v)
	}
	cfg := engineConfig{Testing: testing, Stderr: stderr}
	if len(victims) > 0 {
		cfg.Target = victims[0].pid
	}

	eng, err := openEngine(c.opts, cfg)
	if err != nil {
		if strings.HasPrefix(err.Error(), "failed to initialize dtrace") {
			c.errorf("%v", err) // already worded by the library
		} else {
			c.errorf("failed to initialize dtrace: %v", err)
		}
		return exitError
	}
	defer eng.Close()

	// Fourth pass: compile.
	for _, cmd := range cmds {
		if st := c.compile(eng, cmd, args[0], operands); st != exitSuccess {
			return st
		}
	}
	c.quiet = c.opts.Quiet

	out := stdout
	switch mode {
	case modeList:
		if ofile != "" {
			f, err := os.OpenFile(ofile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
			if err != nil {
				c.errorf("failed to open output file '%s': %s", ofile, errnoText(err))
				return exitError
			}
			defer f.Close()
			out = f
		}
		return c.list(eng, cmds, out, verbose > 0)
	}

	if ofile != "" {
		f, err := os.OpenFile(ofile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			c.errorf("failed to open output file '%s': %s", ofile, errnoText(err))
			return exitError
		}
		defer f.Close()
		out = f
	}
	total := 0
	for _, cmd := range cmds {
		var info progInfo
		if !execute {
			info = eng.Info(cmd.prog)
		} else {
			info, err = eng.Exec(cmd.prog)
			if err != nil {
				c.errorf("failed to enable '%s': %v", cmd.name, err)
				return exitError
			}
			c.notice("%s '%s' matched %d probe%s", cmd.desc, cmd.name, info.Matches, plural(info.Matches))
		}
		if verbose > 0 {
			c.stabilityReport(out, cmd, info, execute)
		}
		total += info.Matches
	}
	if exitAfterCompile {
		return exitSuccess
	}
	if total == 0 && !c.opts.ZDefs {
		if len(cmds) > 0 {
			c.errorf("no probes matched")
		} else {
			c.errorf("no probes specified")
		}
		return exitError
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	if err := eng.Go(); err != nil {
		c.errorf("could not enable tracing: %v", err)
		return exitError
	}
	c.quiet = c.opts.Quiet
	if c.opts.Destructive {
		c.notice("allowing destructive actions")
	}
	for _, v := range victims {
		v.continueProcess()
	}
	return c.consume(eng, out, sigs, victims, testing)
}

// compile compiles one command into cmd.prog.
func (c *cmdline) compile(eng engine, cmd *command, arg0 string, operands []string) int {
	src := source{Name: cmd.arg, IsFile: cmd.file, Kind: cmd.kind}
	if cmd.file {
		text, err := c.readScript(cmd.arg)
		if err != nil {
			c.errorf("failed to open %s: %s", cmd.arg, errnoText(err))
			return exitError
		}
		text = cpp.StripInterpreter(text)
		if c.opts.CPP {
			res, err := cpp.Run(context.Background(), cpp.Config{
				Path:    c.opts.CPPPath,
				Args:    c.opts.CPPArgs,
				Stdc:    c.opts.Stdc,
				Version: c.opts.VersionNum,
			}, text, c.stderr)
			if err != nil {
				c.errorf("failed to compile script %s: %v", cmd.arg, err)
				return exitError
			}
			src.Text = res.Text
			for _, l := range res.Lines {
				src.Lines = append(src.Lines, lineOrigin{File: l.File, Line: l.Line})
			}
		} else {
			src.Text = string(text)
		}
		src.Args = append([]string{cmd.arg}, operands...)
		cmd.name = cmd.arg
	} else {
		src.Text = cmd.arg
		src.Args = append([]string{arg0}, operands...)
		// Messages quote the specifier up to its predicate or body.
		cmd.name = cmd.arg
		if i := strings.IndexAny(cmd.arg, "{/;"); i >= 0 {
			cmd.name = cmd.arg[:i]
		}
	}
	prog, err := eng.Compile(src)
	if err != nil {
		if cmd.file {
			c.errorf("failed to compile script %s: %v", cmd.arg, err)
		} else {
			c.errorf("invalid probe specifier %s: %v", cmd.arg, err)
		}
		return exitError
	}
	cmd.prog = prog
	return exitSuccess
}

// readScript reads a -s file; "/dev/stdin" reads the command's input.
func (c *cmdline) readScript(path string) ([]byte, error) {
	if path == "/dev/stdin" && c.stdin != nil {
		return io.ReadAll(c.stdin)
	}
	return os.ReadFile(path)
}

// list is -l: the probes each program matches, or every probe.
func (c *cmdline) list(eng engine, cmds []*command, out io.Writer, verbose bool) int {
	fmt.Fprintf(out, "%5s %10s %17s %33s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME")
	progs := []program{nil}
	if len(cmds) > 0 {
		progs = progs[:0]
		for _, cmd := range cmds {
			progs = append(progs, cmd.prog)
		}
	}
	status := exitSuccess
	for _, p := range progs {
		probes, err := eng.List(p)
		for _, pd := range probes {
			fmt.Fprintf(out, "%5d %10s %17s %33s %s\n", pd.ID, pd.Provider, pd.Module, pd.Function, pd.Name)
			if verbose {
				listVerbose(out, pd)
			}
		}
		if err != nil {
			c.errorf("%v", err)
			if errors.Is(err, errNotImplemented) {
				status = exitError
			}
		}
	}
	return status
}

// stabilityReport prints -v's report for one program.
func (c *cmdline) stabilityReport(out io.Writer, cmd *command, info progInfo, executed bool) {
	fmt.Fprintf(out, "\nStability attributes for %s %s:\n", cmd.desc, cmd.name)
	printAttr := func(title string, a attr) {
		fmt.Fprintf(out, "\n\t%s\n", title)
		fmt.Fprintf(out, "\t\tIdentifier Names: %s\n", a.Name)
		fmt.Fprintf(out, "\t\tData Semantics:   %s\n", a.Data)
		fmt.Fprintf(out, "\t\tDependency Class: %s\n", a.Class)
	}
	printAttr("Minimum Probe Description Attributes", info.DescAttr)
	printAttr("Minimum Statement Attributes", info.StmtAttr)
	if executed {
		fmt.Fprintln(out)
		return
	}
	for _, p := range info.Probes {
		fmt.Fprintf(out, "\n%s\n", p)
	}
}

// consume is dtrace's main loop: work until done, stopping on a signal or
// when every -c/-p process is gone.
func (c *cmdline) consume(eng engine, out io.Writer, sigs <-chan os.Signal, victims []*victim, testing bool) int {
	interrupted, stopped := 0, false
	newline := false
	for done := false; !done; {
		select {
		case <-sigs:
			interrupted++
			if interrupted == 1 {
				newline = true
			}
		default:
		}
		if interrupted > 1 {
			// Impatient: a second signal abandons the output.
			return eng.ExitStatus()
		}
		if newline && !testing {
			// dtrace prints a newline on interrupt so that output
			// starts on a clean line; not in testing mode, where its
			// position would vary.
			fmt.Fprintln(outputOf(eng, out))
		}
		newline = false
		if !stopped && (interrupted > 0 || allExited(victims)) {
			if err := eng.Stop(); err != nil {
				c.errorf("couldn't stop tracing: %v", err)
				return exitError
			}
			stopped = true
		}
		var err error
		done, err = eng.Work(out)
		if err != nil {
			c.errorf("processing aborted: %v", err)
			return exitError
		}
	}
	// What follows goes where freopen() last sent the output.
	out = outputOf(eng, out)
	fmt.Fprintln(out)
	// Then the aggregations that printa() did not print.
	if ap, ok := eng.(aggPrinter); ok {
		if err := ap.PrintAggregations(out); err != nil {
			c.errorf("failed to print aggregations: %v", err)
			return exitError
		}
	}
	return eng.ExitStatus()
}

// outputRedirector is the optional engine method that says where output
// meant for w goes (freopen() redirects it).
type outputRedirector interface {
	Output(w io.Writer) io.Writer
}

func outputOf(eng engine, w io.Writer) io.Writer {
	if r, ok := eng.(outputRedirector); ok {
		return r.Output(w)
	}
	return w
}

// aggPrinter is the optional engine method that prints aggregations at
// exit, after dtrace's final newline.
type aggPrinter interface {
	PrintAggregations(w io.Writer) error
}

func allExited(victims []*victim) bool {
	if len(victims) == 0 {
		return false
	}
	for _, v := range victims {
		select {
		case <-v.exited:
		default:
			return false
		}
	}
	return true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// vcsRevision is the commit the binary was built from, when Go recorded it.
func vcsRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// providerAttrs are the stability attributes -lv prints per provider:
// the probe description's, then the arguments' (name, data, class).
var providerAttrs = map[string][2]attr{
	"dtrace":  {{"Stable", "Stable", "Common"}, {"Stable", "Stable", "Common"}},
	"profile": {{"Evolving", "Evolving", "Common"}, {"Evolving", "Evolving", "Common"}},
	"syscall": {{"Evolving", "Evolving", "Common"}, {"Private", "Private", "ISA"}},
}

// listVerbose prints the -lv block of one probe: its stability and the
// types of its arguments.
func listVerbose(out io.Writer, pd probeDesc) {
	a, ok := providerAttrs[pd.Provider]
	if !ok {
		a = [2]attr{{"Private", "Private", "Unknown"}, {"Evolving", "Evolving", "ISA"}}
	}
	block := func(title string, x attr) {
		fmt.Fprintf(out, "\n\t%s\n\t\tIdentifier Names: %s\n\t\tData Semantics:   %s\n\t\tDependency Class: %s\n", title, x.Name, x.Data, x.Class)
	}
	block("Probe Description Attributes", a[0])
	block("Argument Attributes", a[1])
	fmt.Fprintf(out, "\n\tArgument Types\n")
	if len(pd.Args) == 0 {
		fmt.Fprintf(out, "\t\tNone\n")
	}
	for i, t := range pd.Args {
		fmt.Fprintf(out, "\t\targs[%d]: %s\n", i, t)
	}
	fmt.Fprintln(out)
}

// header is dtrace -h: a C header of each script's provider definitions,
// written to -o FILE or to the script's name with .h for .d.
func (c *cmdline) header(cmds []*command, ofile string) int {
	for _, cmd := range cmds {
		if !cmd.file {
			c.errorf("-h requires scripts (-s) holding provider definitions")
			return exitUsage
		}
		text, err := os.ReadFile(cmd.arg)
		if err != nil {
			c.errorf("failed to open %s: %s", cmd.arg, errnoText(err))
			return exitError
		}
		out := ofile
		if out == "" {
			out = strings.TrimSuffix(filepath.Base(cmd.arg), ".d") + ".h"
		}
		var b strings.Builder
		if err := dtrace.WriteHeader(&b, dtrace.Source{Name: cmd.arg, Text: string(text), Script: true}, out); err != nil {
			c.errorf("%v", err)
			return exitError
		}
		if err := os.WriteFile(out, []byte(b.String()), 0o666); err != nil {
			c.errorf("failed to write header %s: %s", out, errnoText(err))
			return exitError
		}
	}
	return exitSuccess
}

// link is dtrace -G. The probes of a program built with a dtrace -h
// header are <sys/sdt.h> notes that need no link step, so -G is accepted
// for the build files that call it: it writes an object with nothing in
// it to -o FILE or the script's name with .o, made by the C compiler and
// passed through the linker (the ldpath option) as dtrace does.
func (c *cmdline) link(cmds []*command, ofile string) int {
	script := "d"
	if len(cmds) > 0 && cmds[0].file {
		script = strings.TrimSuffix(cmds[0].arg, ".d")
	}
	out := ofile
	if out == "" {
		out = filepath.Base(script) + ".o"
	}
	tmp, err := os.MkdirTemp("", "dtrace-G")
	if err != nil {
		c.errorf("failed to link script %s: %v", script, err)
		return exitError
	}
	defer os.RemoveAll(tmp)
	obj := filepath.Join(tmp, "empty.o")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	cmd := exec.Command(cc, "-c", "-x", "c", "-o", obj, "-")
	cmd.Stdin = strings.NewReader("/* dtrace -G: probes come from <sys/sdt.h> notes */\n")
	if msg, err := cmd.CombinedOutput(); err != nil {
		c.errorf("failed to link script %s: %s: %v: %s", script, cc, err, strings.TrimSpace(string(msg)))
		return exitError
	}
	ld := c.opts.LdPath
	if ld == "" {
		ld = "ld"
	}
	link := exec.Command("sh", "-c", ld+` -r -o "$1" "$2"`, "sh", out, obj)
	link.Stdout, link.Stderr = c.stderr, c.stderr
	if err := link.Run(); err != nil {
		status := -1
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		}
		c.errorf("failed to link script %s: failed to link %s: %s exited with status %d", script, out, ld, status)
		return exitError
	}
	return exitSuccess
}
