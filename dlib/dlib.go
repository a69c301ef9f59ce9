package dlib

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

//go:embed d/*.d d/constants.tab
var files embed.FS

// order lists the library's files so that each comes after the files it
// depends on (#pragma D depends_on library).
var order = []string{
	"errno.d",
	"signal.d",
	"regs.d",
	"unistd.d",
	"sched.d",
	"procfs.d",
	"container.d",
	"net.d",
	"inet.d",
	"ip.d",
	"tcp.d",
	"udp.d",
	"io.d",
	"io-dev.d",
	"io-dev61.d",
	"pcap.d",
	"lockstat.d",
	"kvars.d",
}

// Source is one file of the D library.
type Source struct {
	Name string // "procfs.d"
	Text string
}

// Sources returns the library's files in dependency order.
func Sources() []Source {
	out := make([]Source, 0, len(order))
	for _, name := range order {
		out = append(out, source(name))
	}
	return out
}

// Names returns the names of the library's files in dependency order,
// without reading them (Sources reads and expands every file).
func Names() []string {
	return append([]string(nil), order...)
}

// source returns the library file name (of order) for this
// architecture.
func source(name string) Source {
	return sourceFor(name, runtime.GOARCH)
}

func sourceFor(name, arch string) Source {
	file := name
	if name == "regs.d" {
		// uregs[] indexes differ between architectures.
		file = "regs-amd64.d"
		if arch == "arm64" {
			file = "regs-arm64.d"
		}
	}
	text, err := readFile(file)
	if err != nil {
		panic("dlib: " + err.Error()) // the embedded files disagree
	}
	for _, r := range archEdits[arch][name] {
		text = strings.ReplaceAll(text, r[0], r[1])
	}
	return Source{Name: name, Text: text}
}

// variants are library files made from another file by replacements:
// translators that differ between kernels in one field have one text.
var variants = map[string]struct {
	from  string
	edits [][2]string
}{
	// Kernels before 6.10 keep a block device's partition number in
	// bd_partno; later ones in the low byte of __bd_flags.
	"io-dev61.d": {"io-dev.d", [][2]string{
		{"io-dev.d: the devinfo_t translators of the io provider for kernels from 6.10,\n" +
			" * which keep a block device's partition number in the low byte of\n * __bd_flags.",
			"io-dev61.d: the devinfo_t translators of the io provider for kernels before 6.10,\n" +
				" * which keep a block device's partition number in bd_partno."},
		{"__bd_flags.counter & 255", "bd_partno"},
	}},
}

// readFile returns the text of the embedded library file name (or of
// the variant name) with its integer constants written in (see
// d/constants.tab).
func readFile(name string) (string, error) {
	v, variant := variants[name]
	file := name
	if variant {
		file = v.from
	}
	b, err := files.ReadFile("d/" + file)
	if err != nil {
		return "", err
	}
	for _, e := range v.edits {
		if !bytes.Contains(b, []byte(e[0])) {
			return "", fmt.Errorf("%s: %q is not in %s", name, e[0], file)
		}
		b = bytes.ReplaceAll(b, []byte(e[0]), []byte(e[1]))
	}
	tab, err := files.ReadFile("d/constants.tab")
	if err != nil {
		return "", err
	}
	return expandConstants(name, string(b), string(tab))
}

// expandConstants replaces each line "/* constants: name N */" of text,
// the library file name, with the declarations of section [name N type]
// of tab, the table of the library's integer constants: a line
// "NAME VALUE[tail]" there declares "inline type NAME = VALUE;[tail]".
// The constants are kept as a table because written out, list after
// list, they are the same line over and over.
func expandConstants(name, text, tab string) (string, error) {
	sections := map[string]string{} // "N" to its declarations
	var key, typ string             // the section being read, if name's
	for _, line := range strings.Split(tab, "\n") {
		switch {
		case line == "" || line[0] == '#':
		case line[0] == '[':
			f := strings.Fields(strings.Trim(line, "[]"))
			if len(f) != 3 {
				return "", fmt.Errorf("constants.tab: bad section %q", line)
			}
			key, typ = "", ""
			if f[0] == name {
				key, typ = f[1], f[2]
			}
		case key != "":
			cname, rest, _ := strings.Cut(line, " ")
			value, tail, _ := strings.Cut(rest, "\t")
			if tail != "" {
				tail = "\t" + tail
			}
			sections[key] += "inline " + typ + " " + cname + " = " + value + ";" + tail + "\n"
		}
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		n, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "/* constants: "+name+" ")
		if !ok {
			continue
		}
		n = strings.TrimSuffix(n, " */")
		decls, ok := sections[n]
		if !ok {
			return "", fmt.Errorf("%s: no section %s in constants.tab", name, n)
		}
		if !strings.HasSuffix(line, "\n") {
			decls = strings.TrimSuffix(decls, "\n")
		}
		lines[i] = decls
	}
	return strings.Join(lines, ""), nil
}

// archEdits adapts the files, written for x86_64, to the kernel
// structures of other architectures: file name to replacements.
var archEdits = map[string]map[string][][2]string{
	// arm64 keeps a task's CPU in task_struct, x86 in its thread_info.
	"arm64": {"procfs.d": {{"T->thread_info.cpu", "T->cpu"}}},
}

// Library is the D library parsed and checked against one kernel.
type Library struct {
	// Programs are the files that checked, in dependency order: pass
	// them before the user's programs, with check.Config.LibraryPrograms
	// set to their number.
	Programs []*syntax.Program
	// Names are the names of Programs' files.
	Names []string
	// Dropped says why files were left out: a file that does not parse or
	// check (its kernel lacks a type or member it uses), and the files
	// that depend on it.
	Dropped []error

	typedefs   map[string]bool
	idents     map[string]bool
	isTypeName func(string) bool
}

// IsTypeName reports whether name is a typedef the library declares
// (psinfo_t, cpuinfo_t, ...) or, through the function given to Load, a
// kernel type name: what syntax.Config.IsTypeName of a user program
// should be. A nil Library has no names.
func (l *Library) IsTypeName(name string) bool {
	if l == nil {
		return false
	}
	// The library's types live in D's own scope, which a program may name.
	if l.typedefs[strings.TrimPrefix(name, "D`")] {
		return true
	}
	return l.isTypeName != nil && l.isTypeName(name)
}

// IsIdent reports whether name is an identifier the library defines
// (an inline such as curpsinfo or EPERM): what syntax.Config.IsIdent of
// a user program should be.
func (l *Library) IsIdent(name string) bool { return l != nil && l.idents[name] }

// Load parses the library's files into fset and checks them with conf
// (its Kernel gives the kernel's types; LibraryPrograms is set here).
// isTypeName reports kernel type names to the parser (nil: none). A file
// that does not parse or check is left out, with the files that depend
// on it, and Library.Dropped says why: a library written for one kernel
// must not stop dtrace on another.
func Load(fset *syntax.FileSet, conf *check.Config, isTypeName func(string) bool) *Library {
	return load(fset, conf, isTypeName, Sources())
}

// LoadSources is Load of other library files as well, such as those of
// dtrace's -L directories (see ReadDir) after Sources(): they are put in
// dependency order first, so they may depend on each other and on the
// system library in any order.
func LoadSources(fset *syntax.FileSet, conf *check.Config, isTypeName func(string) bool, srcs []Source) *Library {
	return load(fset, conf, isTypeName, Order(srcs))
}

// ReadDir returns the D library files (*.d) of a directory, by name.
func ReadDir(dir string) ([]Source, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.d"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Source
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, Source{Name: filepath.Base(n), Text: string(b)})
	}
	return out, nil
}

// Order sorts library files so that each follows the files it names in
// `#pragma D depends_on library X` (read from the text: the parser needs
// the type names of a file's dependencies before it can read the file).
// Otherwise the order is kept. Files in a dependency cycle keep their
// order; checking will then drop what cannot be read.
func Order(srcs []Source) []Source {
	byName := map[string]int{}
	for i, s := range srcs {
		if _, dup := byName[s.Name]; !dup {
			byName[s.Name] = i
		}
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make([]int, len(srcs))
	out := make([]Source, 0, len(srcs))
	var visit func(i int)
	visit = func(i int) {
		if state[i] != unseen {
			return
		}
		state[i] = visiting
		for _, d := range textDependencies(srcs[i].Text) {
			if j, ok := byName[d]; ok {
				visit(j)
			}
		}
		state[i] = done
		out = append(out, srcs[i])
	}
	for i := range srcs {
		visit(i)
	}
	return out
}

// DropError is why a file of the library was left out.
type DropError struct {
	Name string // the file's Source.Name
	Err  error  // a syntax or check error list, or why its dependency is missing
}

func (e *DropError) Error() string { return e.Name + ": " + e.Err.Error() }

func (e *DropError) Unwrap() error { return e.Err }

// Dependencies returns the libraries a file's text names in
// `#pragma D depends_on library X`, in order.
func Dependencies(text string) []string { return textDependencies(text) }

// textDependencies finds the depends_on library pragmas of a file's
// text.
func textDependencies(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		w := strings.Fields(line)
		if len(w) >= 5 && w[0] == "#pragma" && w[1] == "D" && w[2] == "depends_on" && w[3] == "library" {
			out = append(out, strings.Trim(w[4], `"`))
		}
	}
	return out
}

// load is Load of any set of sources.
func load(fset *syntax.FileSet, conf *check.Config, isTypeName func(string) bool, srcs []Source) *Library {
	l := &Library{typedefs: map[string]bool{}, idents: map[string]bool{}, isTypeName: isTypeName}
	var deps [][]string
	pc := &syntax.Config{IsTypeName: l.IsTypeName}
	for _, src := range srcs {
		prog, err := pc.Parse(fset, src.Name, []byte(kernelConstants(src.Text, conf.Kernel)))
		if err != nil {
			l.Dropped = append(l.Dropped, &DropError{Name: src.Name, Err: err})
			continue
		}
		l.Programs = append(l.Programs, prog)
		l.Names = append(l.Names, src.Name)
		deps = append(deps, dependencies(prog))
		// Later files and the user's programs see the names this one
		// declares.
		declared(prog, l.typedefs, l.idents)
	}
	c := *conf
	for {
		l.dropOrphans(&deps)
		c.LibraryPrograms = len(l.Programs)
		_, err := check.Check(fset, l.Programs, &c)
		if err == nil {
			break
		}
		i := l.culprit(fset, err)
		if i < 0 {
			// An error outside any file: nothing to drop, keep none.
			l.Dropped = append(l.Dropped, fmt.Errorf("D library: %w", err))
			l.Programs, l.Names, deps = nil, nil, nil
			break
		}
		l.Dropped = append(l.Dropped, &DropError{Name: l.Names[i], Err: err})
		l.remove(i, &deps)
	}
	// Names from dropped files must not make the parser read a user's
	// identifier as a type.
	l.typedefs, l.idents = map[string]bool{}, map[string]bool{}
	for _, p := range l.Programs {
		declared(p, l.typedefs, l.idents)
	}
	return l
}

// culprit returns the index of the program an error is in, or -1.
func (l *Library) culprit(fset *syntax.FileSet, err error) int {
	var list check.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return -1
	}
	for i, p := range l.Programs {
		if p.Pos() <= list[0].Pos && list[0].Pos <= p.End() {
			return i
		}
	}
	return -1
}

// remove drops program i.
func (l *Library) remove(i int, deps *[][]string) {
	l.Programs = append(l.Programs[:i:i], l.Programs[i+1:]...)
	l.Names = append(l.Names[:i:i], l.Names[i+1:]...)
	*deps = append((*deps)[:i:i], (*deps)[i+1:]...)
}

// dropOrphans drops programs that depend on a library file no longer
// loaded, until none does.
func (l *Library) dropOrphans(deps *[][]string) {
	for changed := true; changed; {
		changed = false
		have := map[string]bool{}
		for _, n := range l.Names {
			have[n] = true
		}
		for i := range l.Programs {
			for _, d := range (*deps)[i] {
				if !have[d] {
					l.Dropped = append(l.Dropped, &DropError{Name: l.Names[i], Err: fmt.Errorf("depends on library %s, which is not loaded", d)})
					l.remove(i, deps)
					changed = true
					break
				}
			}
			if changed {
				break
			}
		}
	}
}

// dependencies returns the library files a program names in
// `#pragma D depends_on library X`.
func dependencies(p *syntax.Program) []string {
	var out []string
	for _, d := range p.Decls {
		pd, ok := d.(*syntax.PragmaDecl)
		if !ok || pd.Directive != "pragma" || len(pd.Words) < 4 {
			continue
		}
		if pd.Words[0] == "D" && pd.Words[1] == "depends_on" && pd.Words[2] == "library" {
			out = append(out, strings.Trim(pd.Words[3], `"`))
		}
	}
	return out
}

// declared adds the typedef names and the inline names a program
// declares.
func declared(p *syntax.Program, typedefs, idents map[string]bool) {
	for _, d := range p.Decls {
		switch d := d.(type) {
		case *syntax.Declaration:
			if d.Specs == nil || d.Specs.Class != syntax.Typedef {
				continue
			}
			for _, dc := range d.Decls {
				if dc.Name != nil {
					typedefs[dc.Name.Name] = true
				}
			}
		case *syntax.InlineDecl:
			if d.Decl != nil && d.Decl.Name != nil {
				idents[d.Decl.Name.Name] = true
			}
		}
	}
}
