//go:build linux

package dtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	gosyscall "syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/consumer"
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/ktypes"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlib"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/text"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/cpc"
	dtraceprov "github.com/dtrace-go/dtrace/provider/dtrace"
	"github.com/dtrace-go/dtrace/provider/fbt"
	"github.com/dtrace-go/dtrace/provider/inet"
	ioprov "github.com/dtrace-go/dtrace/provider/io"
	"github.com/dtrace-go/dtrace/provider/lockstat"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/provider/proc"
	"github.com/dtrace-go/dtrace/provider/profile"
	"github.com/dtrace-go/dtrace/provider/rawtp"
	"github.com/dtrace-go/dtrace/provider/sched"
	"github.com/dtrace-go/dtrace/provider/sdt"
	"github.com/dtrace-go/dtrace/provider/syscall"
	"github.com/dtrace-go/dtrace/provider/usdt"
	"github.com/dtrace-go/dtrace/symbol"
	"github.com/dtrace-go/dtrace/unwind"
)

// Config carries what the caller knows that the library needs besides
// options.
type Config struct {
	// MacroArgs are $0, $1, ... as strings.
	MacroArgs []string
	// Macros are the named macro variables ($target, $pid, ...).
	Macros map[string]int64
	// Target is the pid of the -c or -p process ($target), or 0.
	Target int
	// Testing selects the _DTRACE_TESTING output form.
	Testing bool
	// Stderr receives run-time error and drop messages.
	Stderr io.Writer
	// Stamp has the kernel stamp every record with its time, pid and
	// tid (output.Record's Time, PID and TID), for a renderer that
	// draws a timeline; -x oformat=perfetto and json imply it.
	Stamp bool
}

// Handle is one dtrace session: its options, probes, programs and kernel
// objects. It is not safe for concurrent use.
type Handle struct {
	opts *Options
	conf Config
	// born is when the handle was opened, for -x debug's times.
	born time.Time

	reg  *provider.Registry
	sym  *symbol.Symbolizer
	fset *syntax.FileSet
	// user holds the compiled programs; the D library's come before
	// them when checking.
	user []*syntax.Program
	// flow holds the transports of flow variables once a program uses
	// them (flow.go): the one that comes between the library and the
	// user programs, and the one that comes after them; flowIO the
	// block I/O transports, once a program also enables io probes
	// (usesIO).
	flow   []*syntax.Program
	flowIO *syntax.Program
	usesIO bool
	// libFiles are the D library files loaded (those the programs use).
	libFiles []dlib.Source
	// userLibs are the files of the -L directories, in dependency order
	// (libdirs.go), read once; userLibPaths maps their names to paths.
	userLibs     []dlib.Source
	userLibsErr  error
	userLibsDone bool
	userLibPaths map[string]string
	info         *check.Info
	macroArgs    []string
	macros       map[string]int64
	// lines holds the text of each source, for annotated listings.
	lines map[*syntax.File][]string

	// kern gives the checker the kernel's types and symbols (read when
	// first needed); lib is the D library, loaded by the first Compile.
	kern *ktypes.Types
	lib  *dlib.Library
	// texts holds each source's text by name, for the checker's error
	// positions.
	texts map[string]string

	spec *program.Spec
	objs *loader.Objects
	// uw keeps the user-stack unwinder's tables (nil when no clause
	// takes ustack()).
	uw   *unwind.Maps
	bufs *consumer.Buffers
	// endReserve is what END's clauses record, kept free under the fill
	// policy (checkEnabling).
	endReserve int
	// cons decodes the records; text is the dtrace(1M) text renderer,
	// out the renderer Work prints with (text, or -x oformat's).
	cons *consumer.Consumer
	text *text.Renderer
	out  printer
	// servers are the Serving formats' renderers (-x prometheus, -x
	// otlp), atExit the AtExit formats' (-x pprof, -x flamegraph).
	servers []output.Server
	atExit  []output.Renderer

	started bool

	// pidp and usdtp are the providers whose probes follow the
	// libraries processes load and unload (follow_linux.go); follow
	// does it while tracing, regMu guards the registry against its
	// changes for the consumer's reader threads.
	pidp   *pid.Provider
	usdtp  *usdt.Provider
	follow *follower
	regMu  sync.RWMutex
}

// Open checks privileges and returns a handle with the providers of this
// system.
func Open(opts *Options, conf Config) (*Handle, error) {
	if err := kernel.CheckPrivileges(); err != nil {
		return nil, err
	}
	if conf.Stderr == nil {
		conf.Stderr = os.Stderr
	}
	sym := symbol.NewSymbolizer()
	// Processes are followed once the program is known to name user
	// addresses (Go).
	sym.Follow(false)
	// A debuginfod server that does not answer is said once, here.
	stderr := conf.Stderr
	symbol.SetWarnings(func(msg string) { fmt.Fprintf(stderr, "dtrace: %s\n", msg) })
	fbtp := fbt.New() // lockstat finds kernel functions through fbt
	usdtp := usdt.New(sym)
	usdtp.SetTarget(conf.Target)
	pidp := pid.New(sym)
	sysp := syscall.New()
	sysp.SetMemberOffset(kernelMemberOffset)
	// The syscall provider sees 32-bit processes' system calls on its
	// wide probes only, which cost every system call: all its probes
	// are made wide when the traced process is a 32-bit one.
	sysp.SetCompat(conf.Target != 0 && is32Bit(conf.Target))
	h := &Handle{
		pidp:      pidp,
		usdtp:     usdtp,
		born:      time.Now(),
		sym:       sym,
		opts:      opts,
		conf:      conf,
		fset:      syntax.NewFileSet(),
		macroArgs: conf.MacroArgs,
		macros:    builtinMacros(conf),
		reg:       provider.NewRegistry(dtraceprov.New(), profile.New(), sysp, proc.New(), sched.New(), ioprov.New(), inet.NewIP(), inet.NewTCP(), inet.NewUDP(), cpc.New(), rawtp.New(), sdt.New(), fbtp, lockstat.New(fbtp), pidp, usdtp, ioprov.NewFlow()),
		lines:     map[*syntax.File][]string{},
		kern:      ktypes.Open(),
		texts:     map[string]string{},
	}
	h.checkCTFPath()
	// Make BEGIN, END and ERROR ids 1, 2 and 3.
	if _, err := h.reg.Match(provider.Desc{Provider: "dtrace"}); err != nil {
		return nil, err
	}
	return h, nil
}

// ErrInterrupted is GoContext's error when its context ended the
// attaching.
var ErrInterrupted = errors.New("interrupted")

// Registry returns the handle's providers, for listing.
func (h *Handle) Registry() *provider.Registry { return h.reg }

// Go generates code for every compiled program, loads and attaches it,
// opens the principal buffers and fires BEGIN.
func (h *Handle) Go() error { return h.GoContext(context.Background()) }

// GoContext is Go that gives up attaching when ctx is done (dtrace(1M)
// cancels it on SIGINT and SIGTERM: without kprobe.multi, every function
// of a wide fbt description takes a kprobe of its own, one at a time) and
// returns ErrInterrupted. Close detaches what was attached.
func (h *Handle) GoContext(ctx context.Context) error {
	if h.started {
		return errors.New("tracing already started")
	}
	h.started = true
	if h.info == nil {
		return errors.New("no program compiled")
	}
	// Pragmas may have set output options since the command line.
	if err := h.opts.CheckOutputs(); err != nil {
		return fmt.Errorf("failed to set %v", err)
	}
	h.debugf("generating code")
	spec, err := codegen.Generate(h.info, h.codegenOptions())
	if err != nil {
		return btfHint(err)
	}
	h.spec = spec
	if userAddresses(spec) {
		// Addresses of the target, and of the processes pid and USDT
		// probes named, resolve after they exit. A program that names
		// no user address reads the target's mappings only for its
		// pid and USDT probes, which take their own snapshot.
		h.sym.Follow(true)
		if h.conf.Target != 0 {
			_, _ = h.sym.Process(h.conf.Target)
		}
	}
	if err := h.sizeMaps(); err != nil {
		return err
	}
	if err := h.checkEnabling(); err != nil {
		return err
	}
	cpu := -1
	if h.opts.CPU != Unset {
		if err := checkCPU(h.opts.CPU); err != nil {
			return err
		}
		cpu = int(h.opts.CPU)
	}
	for _, pv := range h.reg.Providers() {
		if c, ok := pv.(provider.CPUChooser); ok {
			c.ChooseCPU(cpu)
		}
	}
	plan, err := loader.NewPlan(spec, h.reg, loader.PlanOptions{ZeroMatches: true, OneCPU: cpu >= 0, CPU: cpu})
	if err != nil {
		return err
	}
	sizeProbeNames(spec, plan, h.mayFollow())
	lopts := loader.Options{VerifierLogSize: verifierLogSize(h.opts.BPFLogSize)}
	if h.opts.BPFLog && h.conf.Stderr != nil {
		lopts.VerifierLog = func(_ *provider.Probe, log string) { writeBPFLog(h.conf.Stderr, log) }
	}
	lopts.Listing = h.programListing()
	h.debugf("%d clauses enabled on %d probes; loading", len(spec.Clauses), len(plan.Probes))
	objs, err := loader.Load(spec, plan, lopts)
	if err != nil {
		h.showVerifierLog(err)
		return err
	}
	h.objs = objs
	if err := h.fillProbeNames(plan.Probes); err != nil {
		return err
	}
	h.startUnwinder()
	policy, err := consumer.ParsePolicy(h.opts.BufPolicy)
	if err != nil {
		return err
	}
	bufs, err := h.openBuffers(objs.Map(abi.MapBuf), consumer.BufferOptions{
		Policy: policy,
		// BEGIN-and-END programs need a small kernel ring, not bufsize.
		Bound: recordBound(spec, plan),
		// A snapshot() that fires is acted on when its record is read.
		Trigger: func(rec []byte) bool { return h.cons != nil && h.cons.Trigger(rec) },
		Stamp:   h.conf.Stamp || h.opts.stamps(),
		// -x temporal: records of all CPUs in time order.
		Temporal: h.opts.Temporal,
		// Under fill, END's records still fit when the rest filled the
		// buffer (illumos's dts_reserve).
		Reserve: h.endReserve,
	})
	if err != nil {
		return err
	}
	h.bufs = bufs
	if err := bufs.Start(); err != nil {
		return err
	}
	if err := h.startConsumer(plan); err != nil {
		return err
	}
	h.debugf("programs of %d probes loaded; attaching", len(plan.Probes))
	if err := objs.AttachContext(ctx); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return ErrInterrupted
		}
		return err
	}
	h.startFollowing(plan, lopts)
	h.debugf("attached; tracing starts")
	if objs.Has(abi.ProbeBegin) {
		// On the CPU read first, so that BEGIN's records come before
		// those of probes on other CPUs, as in dtrace(1M) (which
		// consumes the CPU BEGIN ran on first); in this thread, the
		// task BEGIN's pid, execname and getf() see.
		if err := onCPU(bufs.FirstCPU(), func() error { return objs.Run(abi.ProbeBegin, nil) }); err != nil {
			return fmt.Errorf("BEGIN: %w", err)
		}
	} else if err := h.cons.SetActivity(abi.ActivityActive); err != nil {
		return err
	}
	return nil
}

// checkCPU refuses a cpu option naming no online CPU: nothing would ever
// fire, not even BEGIN.
func checkCPU(cpu int64) error {
	cpus, err := kernel.OnlineCPUs()
	if err != nil {
		return err
	}
	if !slices.Contains(cpus, int(cpu)) {
		return fmt.Errorf("cpu %d is not online", cpu)
	}
	return nil
}

// Close releases every kernel object.
func (h *Handle) Close() error {
	h.sym.Close() // stop following processes
	if r := symbol.ProcessReads(); r != (symbol.ReadCounts{}) {
		h.debugf("read processes' maps %d times, environments %d, /etc/ld.so.conf %d", r.Maps, r.Environ, r.LdSoConf)
	}
	var errs []error
	errs = append(errs, h.stopFollowing())
	errs = append(errs, h.stopServers(nil, nil))
	if h.cons != nil {
		errs = append(errs, h.cons.Close())
	}
	if h.bufs != nil {
		errs = append(errs, h.bufs.Close())
	}
	if h.uw != nil {
		if os.Getenv("DTRACE_UWDEBUG") != "" {
			fmt.Fprintf(os.Stderr, "unwind: %+v\n", h.uw.Stats())
		}
		h.uw.Close()
	}
	if h.objs != nil {
		h.debugf("detaching")
		errs = append(errs, h.objs.Close())
		h.debugf("detached")
	}
	return errors.Join(errs...)
}

// codegenOptions passes the options that shape generated code.
func (h *Handle) codegenOptions() codegen.Options {
	return codegen.Options{
		StrSize:      uint32(h.opts.StrSize),
		NSpec:        uint32(max(h.opts.NSpec, 0)),
		Destructive:  h.opts.Destructive,
		MaxFrames:    h.opts.MaxFrames,
		SourceText:   h.sourceLine,
		MemberOffset: kernelMemberOffset,
		UStackCFI:    runtime.GOARCH == "amd64" && !h.opts.UStackFP,
		AggSize:      h.opts.AggSize,
		FlowSize:     uint32(min(max(h.opts.FlowSize, 1), 1<<24)),
		ISA:          kfeature.Probe().CodegenISA(),
		Link:         h.opts.symbolLink(),
		RecordFlow:   h.flow != nil && h.opts.flows(),
		SpecSize:     h.opts.SpecSize,
		PcapSize:     uint32(h.opts.PcapSize),
	}
}

// kernelBTF is the running kernel's raw BTF, read once when code
// generation first asks for a member offset.
var kernelBTF = sync.OnceValues(kfeature.ReadBTF)

// kernelMemberOffset finds a struct member's offset in the kernel's BTF
// without decoding it all (ktypes.MemberOffset).
func kernelMemberOffset(structName, member string) (uint32, error) {
	raw, err := kernelBTF()
	if err != nil {
		return 0, err
	}
	return ktypes.MemberOffset(raw, structName, member)
}

// is32Bit reports whether process pid runs a 32-bit ELF executable (its
// ELF class, in /proc/PID/exe); false if that cannot be read.
func is32Bit(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	var ident [5]byte
	if _, err := io.ReadFull(f, ident[:]); err != nil {
		return false
	}
	return string(ident[:4]) == "\x7fELF" && ident[4] == 1 // ELFCLASS32
}

// builtinMacros gives the named macro variables: $pid and friends of the
// dtrace process, $target of the traced one.
func builtinMacros(conf Config) map[string]int64 {
	m := map[string]int64{
		"pid":  int64(os.Getpid()),
		"ppid": int64(os.Getppid()),
		"uid":  int64(os.Getuid()),
		"gid":  int64(os.Getgid()),
	}
	if pgid, err := gosyscall.Getpgid(0); err == nil {
		m["pgid"] = int64(pgid)
	}
	if sid, err := unix.Getsid(0); err == nil {
		m["sid"] = int64(sid)
	}
	m["projid"], m["taskid"] = 0, 0
	if conf.Target != 0 {
		m["target"] = int64(conf.Target)
	}
	for k, v := range conf.Macros {
		m[k] = v
	}
	return m
}

// minDynVars is the fewest entries a dynamic variable map gets.
const minDynVars = 16

// perfHeaderSize is the size of the header the kernel puts before each
// record in a perf buffer.
const perfHeaderSize = 8

// Errors of enabling, in dtrace's words.
var (
	errDestructive = errors.New("Destructive actions not allowed")
	errBufTooSmall = errors.New("Enabling exceeds size of buffer")
	errEndTooBig   = errors.New("END enablings exceed size of principal buffer")
)

// checkEnabling refuses, as dtrace does when enabling, programs that need
// -w, and buffers too small for the largest record (or, under the fill
// policy, for what END records). Under the ring policy a small buffer
// runs, as in illumos: records that do not fit are dropped and counted.
func (h *Handle) checkEnabling() error {
	if !h.opts.Destructive {
		for _, cl := range h.info.Clauses {
			if cl.Destructive {
				return errDestructive
			}
		}
	}
	var maxRec, endRec uint32
	hasError := false
	for _, cs := range h.spec.Clauses {
		var size uint32
		for _, seg := range cs.Segments {
			size += seg.Size
			maxRec = max(maxRec, seg.Size)
		}
		if cs.IsError {
			hasError = true
		}
		for _, d := range cs.Probes {
			if fd := fullDesc(d); fd == "dtrace:::END" || fd == ":::END" {
				endRec += size
			}
		}
	}
	if hasError {
		maxRec = max(maxRec, abi.FaultRecordSize)
	}
	h.endReserve = int(endRec)
	if h.opts.BufPolicy == "fill" && endRec > 0 && h.opts.BufSize < int64(perfHeaderSize+endRec) {
		return errEndTooBig
	}
	if h.opts.BufSize <= 0 || h.opts.BufSize < int64(perfHeaderSize+maxRec) && h.opts.BufPolicy != BufPolicyRing {
		return errBufTooSmall
	}
	return nil
}

// sizeProbeNames makes dt_probes, an array indexed by probe id, just
// large enough for the enabled probes, and with room for followProbes
// more when probes may be added while tracing (follow).
func sizeProbeNames(spec *program.Spec, plan *loader.Plan, follow bool) {
	var top uint32
	for _, pp := range plan.Probes {
		top = max(top, pp.Probe.ID)
	}
	if follow {
		top += followProbes
	}
	for i := range spec.Maps {
		if spec.Maps[i].Name == abi.MapProbes {
			spec.Maps[i].MaxEntries = top + 1
		}
	}
}

// fillProbeNames stores the names of the enabled probes pps in
// dt_probes, where probeprov, probemod, probefunc and probename read
// them. A probe added while tracing whose id is past the map's end (see
// followProbes) goes without.
func (h *Handle) fillProbeNames(pps []*loader.ProbePlan) error {
	m := h.objs.Map(abi.MapProbes)
	if m == nil {
		return nil
	}
	for _, pp := range pps {
		p := pp.Probe
		if p.ID >= m.MaxEntries() {
			continue
		}
		val := make([]byte, 4*abi.ProbeNameSize)
		for i, name := range []string{p.Provider, p.Module, p.Function, p.Name} {
			copy(val[i*abi.ProbeNameSize:(i+1)*abi.ProbeNameSize-1], name)
		}
		if err := m.Put(p.ID, val); err != nil {
			return fmt.Errorf("%s: %w", abi.MapProbes, err)
		}
	}
	return nil
}

// sizeMaps bounds the aggregation maps by the aggsize option and the
// dynamic variable maps by dynvarsize (bytes) as dtrace-utils does
// (gmap_create_aggs, gmap_create_dvars): size / (largest tuple + largest
// value) entries, as the program's Charged sizes count them, and an
// enabling where not one fits is refused. Our entries carry keys
// dtrace-utils does not charge for (thread id, widened integers), so a
// map also holds no more entries than the option's bytes hold of ours
// (aggregations: ChargedSize; dynamic variables: at least minDynVars);
// thread-local variables and associative arrays are two maps here, one
// in dtrace-utils, so each gets the count.
func (h *Handle) sizeMaps() error {
	entries := func(budget int64, ms program.MapSpec) uint32 {
		per := int64(ms.KeySize) + int64(ms.ValueSize)
		if budget <= 0 || per == 0 {
			return ms.MaxEntries
		}
		return uint32(min(max(budget/per, 1), 1<<24))
	}
	ch := h.spec.Charged
	fits := func(budget int64, per uint32) (uint32, error) {
		if budget <= 0 || per == 0 {
			return 1 << 24, nil
		}
		n := budget / int64(per)
		if n == 0 {
			return 0, errBufTooSmall
		}
		return uint32(min(n, 1<<24)), nil
	}
	for i, ms := range h.spec.Maps {
		switch {
		case ms.Name == abi.MapTVars || ms.Name == abi.MapAssoc:
			n, err := fits(h.opts.DynVarSize, ch.Tuple+ch.DynVar)
			if err != nil {
				return err
			}
			h.spec.Maps[i].MaxEntries = min(n, max(entries(h.opts.DynVarSize, ms), minDynVars))
		case strings.HasPrefix(ms.Name, abi.MapAggPrefix):
			n, err := fits(h.opts.AggSize, ch.Tuple+ch.AggData)
			if err != nil {
				return err
			}
			// Charged as dtrace charges the entry, not by our
			// (possibly narrowed) key.
			for _, a := range h.spec.Aggs {
				if a != nil && a.Map == ms.Name && a.ChargedSize > 0 {
					ms.KeySize, ms.ValueSize = a.ChargedSize, 0
				}
			}
			h.spec.Maps[i].MaxEntries = min(n, entries(h.opts.AggSize, ms))
		}
	}
	return nil
}
