package dtrace

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlib"
	"github.com/dtrace-go/dtrace/internal/bpfdis"
	"github.com/dtrace-go/dtrace/provider"
)

// Program is one compiled source. All programs of a Handle share one
// set of variables and aggregations, as in dtrace, and are generated and
// loaded together when tracing starts.
type Program struct {
	Source Source
	ast    *syntax.Program
	// Matches is the number of distinct probes the program's clauses
	// enable.
	Matches int
	// Probes lists the expanded description of each clause, in order.
	Probes []string
	// DescAttr and StmtAttr are the least stability attributes of the
	// clauses' probe descriptions and of their statements (dtrace -v).
	DescAttr, StmtAttr check.Attr
}

// Compile parses and checks one source. Pragmas update the handle's
// options. The program is enabled by Exec.
func (h *Handle) Compile(src Source) (*Program, error) {
	if h.started {
		return nil, errors.New("cannot compile after tracing has started")
	}
	if src.MacroArgs != nil {
		h.macroArgs = src.MacroArgs
	}
	h.texts[src.Name] = src.Text
	h.debugf("compiling %s %s", src.Noun(), src.Label())
	if err := h.loadLibrary(src.Text); err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	h.debugf("D library: %d files", len(h.libFiles))
	ast, err := h.parse(src)
	if err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	before, after, err := h.flowPrograms(ast)
	if err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	progs := append(append([]*syntax.Program(nil), h.lib.Programs...), before...)
	progs = append(append(append(progs, h.user...), ast), after...)
	conf := h.checkConfig()
	info, err := check.Check(h.fset, progs, conf)
	if err != nil {
		return nil, &SourceError{Source: src, Err: h.compileError(err)}
	}
	dumpTrees(h.conf.Stderr, h.opts.Tree, ast, info, conf)
	if err := h.writeTypes(info); err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	if err := h.checkTuples(ast, info); err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	p := &Program{Source: src, ast: ast, DescAttr: check.DefaultAttr, StmtAttr: check.DefaultAttr}
	first := true
	for _, cl := range info.Clauses {
		// dtrace counts enablings: each description of a clause on each
		// probe it names (a probe named twice runs the clause twice).
		if !h.inProgram(cl, ast) {
			continue
		}
		if first {
			p.DescAttr, p.StmtAttr, first = cl.DescAttr, cl.StmtAttr, false
		}
		p.DescAttr = check.MinAttr(p.DescAttr, cl.DescAttr)
		p.StmtAttr = check.MinAttr(p.StmtAttr, cl.StmtAttr)
		for i, d := range cl.Probes {
			p.Probes = append(p.Probes, d)
			line := 0
			if i < len(cl.Decl.Descs) {
				line = h.fset.Position(cl.Decl.Descs[i].Pos()).Line
			}
			probes, err := h.match(d)
			if err != nil {
				// Providers' errors in making probes carry dtrace's tag
				// (D_PROC_FUNC, ...): report them as compile errors.
				var te interface{ ErrTag() string }
				if errors.As(err, &te) {
					err = &CompileError{Tag: te.ErrTag(), Line: line, Msg: te.(error).Error(), ShowTags: h.opts.ErrTags}
				}
				return nil, &SourceError{Source: src, Err: err}
			}
			if len(probes) == 0 && !h.opts.ZDefs {
				return nil, &SourceError{Source: src, Err: &CompileError{
					Tag: "D_PDESC_ZERO", Line: line, ShowTags: h.opts.ErrTags,
					Msg: fmt.Sprintf("probe description %s does not match any probes", fullDesc(d)) + h.unavailable(d),
				}}
			}
			p.Matches += len(probes)
		}
	}
	h.user = append(h.user, ast)
	h.info = info
	if f := h.fset.File(ast.Pos()); f != nil {
		h.lines[f] = strings.Split(src.Text, "\n")
	}
	if h.opts.symbolLink() != codegen.LinkStatic {
		// Kernel symbols left to link time are refused when compiling,
		// as dtrace refuses the relocations that remain.
		if _, err := codegen.Generate(info, h.codegenOptions()); err != nil {
			return nil, &SourceError{Source: src, Err: h.codegenError(err)}
		}
	}
	if h.opts.Verbose && h.disasm()&DisasmClause != 0 {
		// -S: show the generated code of the program's clauses (unless
		// -x disasm leaves out dtrace-utils' clause listing).
		if err := h.writeListing(h.conf.Stderr, ast); err != nil {
			return nil, &SourceError{Source: src, Err: err}
		}
	}
	return p, nil
}

// sourceLine renders a position as "line N: text" for annotated
// listings (-S) and verifier errors.
func (h *Handle) sourceLine(pos syntax.Pos) string {
	f := h.fset.File(pos)
	if f == nil {
		return ""
	}
	line := f.Position(pos).Line
	text := ""
	if ls := h.lines[f]; line >= 1 && line <= len(ls) {
		text = strings.TrimSpace(ls[line-1])
	}
	return fmt.Sprintf("line %d: %s", line, text)
}

// writeListing prints the BPF code of the clauses written in ast in the
// layout of dtrace-utils' disassembler (internal/bpfdis): a "Disassembly
// of clause" heading naming the clause's probe descriptions and symbol,
// a line per instruction slot, the D source line each run of code came
// from as a comment line, the clause's variables and the slots the
// loader completes. The functions the clauses call follow, each under
// "Disassembly of function".
func (h *Handle) writeListing(w io.Writer, ast *syntax.Program) error {
	spec, err := codegen.Generate(h.info, h.codegenOptions())
	if err != nil {
		return err
	}
	for _, cs := range spec.Clauses {
		if cs.Index >= len(h.info.Clauses) || !h.inProgram(h.info.Clauses[cs.Index], ast) {
			continue
		}
		l, err := bpfdis.FromInstructions(cs.Insns)
		if err != nil {
			return fmt.Errorf("%s: %w", cs.Symbol, err)
		}
		descs := make([]string, len(cs.Probes))
		for i, d := range cs.Probes {
			descs[i] = fullDesc(d)
		}
		fmt.Fprintf(w, "\nDisassembly of clause %s, <%s>:\n", strings.Join(descs, ", "), cs.Symbol)
		l.Write(w)
		writeVarTable(w, h.info.Clauses[cs.Index], h.info, spec, len(l.Slots))
		l.WriteRelocs(w)
		fmt.Fprintln(w)
	}
	for _, f := range spec.Funcs {
		if len(f) == 0 {
			continue
		}
		l, err := bpfdis.FromInstructions(f)
		if err != nil {
			return fmt.Errorf("%s: %w", f[0].Symbol(), err)
		}
		fmt.Fprintf(w, "\nDisassembly of function <%s>:\n", f[0].Symbol())
		l.Write(w)
		l.WriteRelocs(w)
		fmt.Fprintln(w)
	}
	return nil
}

// inProgram reports whether clause cl was written in ast.
func (h *Handle) inProgram(cl *check.Clause, ast *syntax.Program) bool {
	for _, d := range ast.Decls {
		if d == syntax.Decl(cl.Decl) {
			return true
		}
	}
	return false
}

// match returns the probes a description names.
func (h *Handle) match(desc string) ([]*provider.Probe, error) {
	d, err := provider.ParseDesc(desc)
	if err != nil {
		return nil, err
	}
	return h.reg.Match(d)
}

// fullDesc writes a description with all four fields, as dtrace's
// messages show it (":::BEGIN" for "BEGIN").
func fullDesc(desc string) string {
	d, err := provider.ParseDesc(desc)
	if err != nil {
		return desc
	}
	return d.String()
}

// checkConfig gives the checker what it needs from the handle.
func (h *Handle) checkConfig() *check.Config {
	return &check.Config{
		MacroArgs:   h.macroArgs,
		Macros:      h.macros,
		StrSize:     h.opts.StrSize,
		DefaultArgs: h.opts.DefaultArgs,
		Destructive: h.opts.Destructive,
		ScratchSize: h.opts.ScratchSize,
		ArgRef:      h.opts.ArgRef,
		Version:     h.opts.VersionNum,
		AttrMin:     h.attrMin(),
		ProviderAttrs: func(name string) *check.ProviderAttrs {
			if a, ok := providerAttrs[name]; ok {
				return &a
			}
			// Other providers (and pid/USDT ones, named with a
			// process ID) are described alike; matching their
			// probes to learn whether they exist could be costly.
			if strings.TrimRight(name, "0123456789") != name {
				return &defaultProviderAttrs
			}
			for _, pv := range h.reg.Providers() {
				if pv.Name() == name {
					return &defaultProviderAttrs
				}
			}
			return nil
		},
		Empty:     h.opts.Empty,
		ProbeArgs: h.probeArgs,
		Source: func(name string) []byte {
			if t, ok := h.texts[name]; ok {
				return []byte(t)
			}
			return nil
		},
		Pragma: func(name, value string) error {
			return h.opts.SetPragma(name, value, value != "")
		},
		Kernel: h.kern,
		// The D library's programs come first in h.asts.
		LibraryPrograms: len(h.lib.Programs),
	}
}

// attrMin returns the amin option as the checker takes it.
func (h *Handle) attrMin() *check.Attr {
	if h.opts.Amin == "" {
		return nil
	}
	a, ok := check.ParseAttr(h.opts.Amin)
	if !ok {
		return nil
	}
	return &a
}

// Stability attributes of the providers, per probe description field and
// for their arguments, as dtrace declares them.
var (
	evolvingCommon = check.Attr{Name: check.Evolving, Data: check.Evolving, Class: check.ClassCommon}
	evolvingISA    = check.Attr{Name: check.Evolving, Data: check.Evolving, Class: check.ClassISA}
	stableCommon   = check.Attr{Name: check.Stable, Data: check.Stable, Class: check.ClassCommon}
	privateUnknown = check.Attr{Name: check.Private, Data: check.Private, Class: check.ClassUnknown}
	privateISA     = check.Attr{Name: check.Private, Data: check.Private, Class: check.ClassISA}
	unstableUnkn   = check.Attr{Name: check.Unstable, Data: check.Unstable, Class: check.ClassUnknown}

	// defaultProviderAttrs are those of the tracepoint-backed
	// providers dtrace describes alike (proc, sched, io, ip, lockstat).
	defaultProviderAttrs = check.ProviderAttrs{Provider: evolvingISA, Module: privateUnknown, Function: privateUnknown, Name: evolvingISA, Args: evolvingISA}

	providerAttrs = map[string]check.ProviderAttrs{
		"dtrace":  {Provider: stableCommon, Module: privateUnknown, Function: privateUnknown, Name: stableCommon, Args: stableCommon},
		"profile": {Provider: evolvingCommon, Module: unstableUnkn, Function: privateUnknown, Name: evolvingCommon, Args: evolvingCommon},
		"tick":    {Provider: evolvingCommon, Module: unstableUnkn, Function: privateUnknown, Name: evolvingCommon, Args: evolvingCommon},
		"cpc":     {Provider: evolvingCommon, Module: unstableUnkn, Function: privateUnknown, Name: evolvingCommon, Args: evolvingCommon},
		"syscall": {Provider: evolvingCommon, Module: privateUnknown, Function: privateISA, Name: evolvingCommon, Args: privateISA},
		"fbt":     {Provider: evolvingCommon, Module: privateUnknown, Function: privateISA, Name: evolvingCommon, Args: privateISA},
		"rawtp":   {Provider: evolvingISA, Module: privateUnknown, Function: privateUnknown, Name: privateISA, Args: privateISA},
		"sdt":     {Provider: evolvingISA, Module: privateUnknown, Function: privateUnknown, Name: privateISA, Args: privateISA},
	}
)

// compileError turns a checker or parser error list into the error
// dtrace reports: the first one.
func (h *Handle) compileError(err error) error {
	var cl check.ErrorList
	if errors.As(err, &cl) && len(cl) > 0 {
		e := cl[0]
		return &CompileError{Tag: e.Tag.String(), Line: e.Position.Line, Msg: e.Msg, ShowTags: h.opts.ErrTags}
	}
	var sl syntax.ErrorList
	if errors.As(err, &sl) && len(sl) > 0 {
		e := sl[0]
		return &CompileError{Tag: e.Tag, Line: e.Pos.Line, Msg: e.Msg, ShowTags: h.opts.ErrTags}
	}
	return err
}

// codegenError turns a tagged code generation error (D_ASRELO) into the
// compile error dtrace reports; others are returned as they are.
func (h *Handle) codegenError(err error) error {
	var ce *codegen.Error
	if errors.As(err, &ce) && ce.Tag != "" {
		return &CompileError{Tag: ce.Tag, Line: h.fset.Position(ce.Pos).Line, Msg: ce.Err.Error(), ShowTags: h.opts.ErrTags}
	}
	return err
}

// parse parses one source in the way its kind asks for.
func (h *Handle) parse(src Source) (*syntax.Program, error) {
	cfg := &syntax.Config{IsTypeName: h.lib.IsTypeName, IsIdent: func(name string) bool { return check.IsPredefinedIdent(name) || h.lib.IsIdent(name) },
		Directive: check.Directive}
	text := src.Text
	if src.Kind != SpecProgram {
		var err error
		if text, err = h.probeIDSpec(src.Kind, text); err != nil {
			return nil, &CompileError{Tag: "D_PDESC_INVAL", Msg: err.Error(), ShowTags: h.opts.ErrTags}
		}
	}
	switch src.Kind {
	case SpecProgram:
	case SpecName:
		cfg.Mode = syntax.BareDescs | syntax.PSpec
	default:
		// -P, -m and -f name one field of a description.
		cfg.Mode = syntax.BareDescs | syntax.PSpec
		var err error
		if text, err = specText(src); err != nil {
			return nil, &CompileError{Tag: "D_PDESC_INVAL", Msg: err.Error(), ShowTags: h.opts.ErrTags}
		}
	}
	prog, err := cfg.Parse(h.fset, src.Name, []byte(text))
	if err != nil {
		return nil, h.compileError(err)
	}
	return prog, nil
}

// specText makes a program of a -P, -m or -f argument: the probe
// description it begins with, which fills the fields from the option's
// leftwards, written out in all four fields, then the predicate
// and actions that may follow. A description with more fields than that
// is refused, quoted as given.
func specText(src Source) (string, error) {
	t := src.Text
	field := map[SpecKind]provider.Field{
		SpecProvider: provider.FieldProvider, SpecModule: provider.FieldModule, SpecFunction: provider.FieldFunction,
	}[src.Kind]
	n := strings.IndexFunc(t, func(r rune) bool { return !isDescChar(r) })
	if n < 0 {
		n = len(t)
	}
	d, err := provider.ParseDescField(t[:n], field)
	if err != nil {
		return "", err
	}
	return d.String() + t[n:], nil
}

// probeIDSpec reads a specifier that begins with a number, as dtrace's
// lexer does, as a probe id: for -n and -i the description of the probe
// with that id replaces it (what follows, "-2" in "4-2", is read as
// another description); the other options name a field and refuse it.
func (h *Handle) probeIDSpec(kind SpecKind, text string) (string, error) {
	n := strings.IndexFunc(text, func(r rune) bool { return r < '0' || r > '9' })
	if n == 0 {
		return text, nil
	}
	if n < 0 {
		n = len(text)
	}
	digits, rest := text[:n], text[n:]
	id, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		return "", fmt.Errorf("identifier %s exceeds maximum probe id", digits)
	}
	if kind != SpecName {
		what := map[SpecKind]string{SpecProvider: "providers", SpecModule: "modules", SpecFunction: "functions"}[kind]
		return "", fmt.Errorf("probe identifier %d not permitted when specifying %s", id, what)
	}
	// Ids are given as providers are first listed: list them all.
	if _, err := h.reg.List(); err != nil {
		return "", err
	}
	p := h.reg.Probe(uint32(id))
	if p == nil {
		return "", fmt.Errorf("invalid probe identifier %d: Unknown probe identifier", id)
	}
	desc := provider.Desc{Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}.String()
	if rest != "" && isDescChar(rune(rest[0])) {
		desc += ","
	}
	return desc + rest, nil
}

// isDescChar reports whether r may appear in a probe description on the
// command line (dtrace's lexer: letters, digits and -$:_.`?*\[]!).
func isDescChar(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-$:_.`?*\\[]!", r))
}

// loadLibrary (re)loads the D library files that the programs compiled
// so far and text use, checked against this kernel on their own (no macro
// arguments, no pragmas), with every file of the -L directories. A
// program that uses none of the library costs no parsing of it and no
// reading of the kernel's BTF. A file of a -L directory that does not
// compile is an error, as in dtrace; a system file is left out.
func (h *Handle) loadLibrary(text string) error {
	user, err := h.userLibraries()
	if err != nil {
		return err
	}
	texts := []string{text}
	for _, t := range h.texts {
		texts = append(texts, t)
	}
	for _, s := range user {
		texts = append(texts, s.Text)
	}
	need := append(dlib.NeededSystem(texts...), user...)
	if h.opts.NoLibs { // -x nolibs: the D library is not loaded at all
		need = nil
	}
	if h.lib != nil && len(need) == len(h.libFiles) {
		return nil
	}
	h.libFiles = need
	h.lib = dlib.LoadSources(h.fset, &check.Config{Kernel: h.kern, StrSize: h.opts.StrSize}, h.kern.IsTypeName, need)
	return h.userLibraryError()
}

// unavailable words why a provider named exactly offers no probes on this
// kernel (fbt without kprobes), for the no-match error.
func (h *Handle) unavailable(desc string) string {
	d, err := provider.ParseDesc(desc)
	if err != nil {
		return ""
	}
	if why := h.reg.Unavailable(d); why != "" {
		return ": " + why
	}
	return ""
}
