package dtrace

import (
	"debug/elf"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/dof"
	"github.com/dtrace-go/dtrace/provider/usdt"
)

// APIVersion is the D language version this implementation offers, as
// dtrace -V prints it and -G's DOF records it in its comment section.
const APIVersion = "Oracle D " + DefaultVersion

// dofProbeDecl is one probe of a provider definition: its name and
// argument types as written.
type dofProbeDecl struct {
	name         string
	nargs, xargs []string
	mapping      []uint8
}

// dofProviderDecl is one provider definition of a -G script.
type dofProviderDecl struct {
	name   string
	probes []dofProbeDecl
}

// providerDecls parses the provider definitions of a D source, with
// their probes' native and translated argument types as written (the
// text of each parameter without its name, blanks folded), and the
// mapping of each translated argument to a native one: the native
// argument of the same name, else the one at its position.
func providerDecls(src Source) ([]dofProviderDecl, error) {
	fset := syntax.NewFileSet()
	prog, err := (&syntax.Config{IsIdent: check.IsPredefinedIdent}).Parse(fset, src.Name, []byte(src.Text))
	if err != nil {
		return nil, &SourceError{Source: src, Err: err}
	}
	text := func(from, to syntax.Pos) string {
		a, b := fset.Position(from).Offset, fset.Position(to).Offset
		if a < 0 || b > len(src.Text) || a > b {
			return ""
		}
		return src.Text[a:b]
	}
	typeOf := func(p *syntax.Param) (typ, name string) {
		if p.Decl != nil && p.Decl.Name != nil {
			name = p.Decl.Name.Name
			typ = text(p.From, p.Decl.Name.From) + " " + text(p.Decl.Name.To, p.To)
		} else {
			typ = text(p.From, p.To)
		}
		return strings.Join(strings.Fields(typ), " "), name
	}
	params := func(ps []*syntax.Param) (types, names []string) {
		if len(ps) == 1 && isVoidParam(ps[0]) {
			return nil, nil
		}
		for _, p := range ps {
			t, n := typeOf(p)
			types, names = append(types, t), append(names, n)
		}
		return types, names
	}
	var out []dofProviderDecl
	for _, d := range prog.Decls {
		p, ok := d.(*syntax.ProviderDecl)
		if !ok {
			continue
		}
		pd := dofProviderDecl{name: p.Name.Name}
		for _, pr := range p.Probes {
			nargs, nnames := params(pr.Params)
			xargs, xnames := nargs, nnames
			if pr.XArgs != nil {
				xargs, xnames = params(pr.XArgs)
			}
			if len(nargs) > 255 || len(xargs) > 255 {
				return nil, &SourceError{Source: src, Err: fmt.Errorf("probe %s:%s has too many arguments", pd.name, pr.Name.Name)}
			}
			m := make([]uint8, len(xargs))
			for i := range xargs {
				m[i] = uint8(i)
				for j, n := range nnames {
					if n != "" && n == xnames[i] {
						m[i] = uint8(j)
					}
				}
				if int(m[i]) >= len(nargs) {
					return nil, &SourceError{Source: src, Err: fmt.Errorf("probe %s:%s: translated argument %d has no native argument", pd.name, pr.Name.Name, i)}
				}
			}
			pd.probes = append(pd.probes, dofProbeDecl{name: pr.Name.Name, nargs: nargs, xargs: xargs, mapping: m})
		}
		out = append(out, pd)
	}
	return out, nil
}

// probeSite is one <sys/sdt.h> probe site of an object: the function
// that holds it and the site's offset in it.
type probeSite struct {
	provider, name string
	fn             string
	global         bool // fn is a global symbol (an object may refer to it)
	off            uint64
}

// objectSites reads the probe sites of an ELF object from its
// .note.stapsdt notes. In a relocatable object (cc -c) a note's pc is a
// relocation against the site's section; elsewhere it is an address.
// Either way the site is attributed to the function symbol covering it;
// sites outside any function are skipped.
func objectSites(path string) ([]probeSite, elf.Class, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, 0, nil // not ELF: left to the linker, as before
	}
	defer f.Close()
	var notes *elf.Section
	var noteIdx int
	for i, s := range f.Sections {
		if s.Name == ".note.stapsdt" {
			notes, noteIdx = s, i
		}
	}
	if notes == nil {
		return nil, f.Class, nil
	}
	data, err := notes.Data()
	if err != nil {
		return nil, f.Class, fmt.Errorf("%s: %v", path, err)
	}
	syms, _ := f.Symbols()
	w := 8
	if f.Class == elf.ELFCLASS32 {
		w = 4
	}
	word := func(b []byte) uint64 {
		if w == 4 {
			return uint64(f.ByteOrder.Uint32(b))
		}
		return f.ByteOrder.Uint64(b)
	}
	relocs, err := noteRelocs(f, noteIdx)
	if err != nil {
		return nil, f.Class, fmt.Errorf("%s: %v", path, err)
	}
	var out []probeSite
	for pos := 0; pos+12 <= len(data); {
		namesz := int(f.ByteOrder.Uint32(data[pos:]))
		descsz := int(f.ByteOrder.Uint32(data[pos+4:]))
		typ := f.ByteOrder.Uint32(data[pos+8:])
		descOff := pos + 12 + (namesz+3)&^3
		next := descOff + (descsz+3)&^3
		if descOff+descsz > len(data) || namesz < 1 {
			break
		}
		owner := strings.TrimRight(string(data[pos+12:pos+12+namesz]), "\x00")
		pos = next
		desc := data[descOff : descOff+descsz]
		if owner != "stapsdt" || typ != 3 || len(desc) < 3*w {
			continue
		}
		parts := strings.SplitN(string(desc[3*w:]), "\x00", 3)
		if len(parts) < 2 {
			continue
		}
		site := probeSite{provider: parts[0], name: parts[1]}
		var secIdx elf.SectionIndex
		var off uint64
		if r, ok := relocs[uint64(descOff)]; ok {
			if r.sym == 0 || int(r.sym) > len(syms) {
				continue
			}
			s := syms[r.sym-1]
			addend := r.addend
			if !r.rela {
				addend = int64(word(desc))
			}
			secIdx, off = s.Section, uint64(int64(s.Value)+addend)
		} else if f.Type == elf.ET_REL {
			continue
		} else {
			secIdx, off = elf.SHN_UNDEF, word(desc)
		}
		fn, ok := functionAt(syms, secIdx, off)
		if !ok {
			continue
		}
		site.fn, site.global, site.off = fn.Name, elf.ST_BIND(fn.Info) != elf.STB_LOCAL, off-fn.Value
		out = append(out, site)
	}
	return out, f.Class, nil
}

// functionAt finds the function symbol covering off in section sec (any
// section for SHN_UNDEF: off is then an address), a global one first.
func functionAt(syms []elf.Symbol, sec elf.SectionIndex, off uint64) (elf.Symbol, bool) {
	var best elf.Symbol
	found := false
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || (sec != elf.SHN_UNDEF && s.Section != sec) {
			continue
		}
		if off < s.Value || (off >= s.Value+s.Size && !(s.Size == 0 && off == s.Value)) {
			continue
		}
		if !found || (elf.ST_BIND(best.Info) == elf.STB_LOCAL && elf.ST_BIND(s.Info) != elf.STB_LOCAL) {
			best, found = s, true
		}
	}
	return best, found
}

type noteReloc struct {
	sym    uint32
	addend int64
	rela   bool
}

// noteRelocs reads the relocations of the section at index target, by
// the offset they patch.
func noteRelocs(f *elf.File, target int) (map[uint64]noteReloc, error) {
	out := map[uint64]noteReloc{}
	for _, s := range f.Sections {
		if int(s.Info) != target || (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, err
		}
		rela := s.Type == elf.SHT_RELA
		bo := f.ByteOrder
		switch {
		case f.Class == elf.ELFCLASS64 && rela:
			for o := 0; o+24 <= len(b); o += 24 {
				info := bo.Uint64(b[o+8:])
				out[bo.Uint64(b[o:])] = noteReloc{uint32(info >> 32), int64(bo.Uint64(b[o+16:])), true}
			}
		case f.Class == elf.ELFCLASS64:
			for o := 0; o+16 <= len(b); o += 16 {
				out[bo.Uint64(b[o:])] = noteReloc{uint32(bo.Uint64(b[o+8:]) >> 32), 0, false}
			}
		case rela:
			for o := 0; o+12 <= len(b); o += 12 {
				out[uint64(bo.Uint32(b[o:]))] = noteReloc{bo.Uint32(b[o+4:]) >> 8, int64(int32(bo.Uint32(b[o+8:]))), true}
			}
		default:
			for o := 0; o+8 <= len(b); o += 8 {
				out[uint64(bo.Uint32(b[o:]))] = noteReloc{bo.Uint32(b[o+4:]) >> 8, 0, false}
			}
		}
	}
	return out, nil
}

// buildDOF makes the DOF of -G: the providers the script defines, each
// probe once per function of the objects that holds sites of it, with
// the sites' offsets in that function. Probes with no sites are left
// out, as by illumos. The is-enabled tests of dtrace -h headers read a
// semaphore, not a code site, so no is-enabled offsets are recorded.
// globals reports, for each relocation the DOF has, whether its
// function may be referred to from another object.
func buildDOF(decls []dofProviderDecl, objs []string, lp64, strip bool) (data []byte, relocs []dof.Reloc, globals map[string]bool, err error) {
	type key struct {
		obj      int
		prov, pr string
		fn       string
	}
	type inst struct {
		key  key
		offs []uint32
	}
	globals = map[string]bool{}
	var insts []*inst
	byKey := map[key]*inst{}
	for i, o := range objs {
		sites, _, err := objectSites(o)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, s := range sites {
			if s.off > 0xffffffff {
				continue
			}
			k := key{i, s.provider, s.name, s.fn}
			in := byKey[k]
			if in == nil {
				in = &inst{key: k}
				byKey[k] = in
				insts = append(insts, in)
			}
			in.offs = append(in.offs, uint32(s.off))
			if s.global {
				globals[s.fn] = true
			}
		}
	}
	unstable := dof.Attr{Name: dof.StabUnstable, Data: dof.StabUnstable, Class: dof.ClassCommon}
	var provs []dof.Provider
	for _, d := range decls {
		pv := dof.Provider{Name: d.name, ProvAttr: unstable, ModAttr: unstable, FuncAttr: unstable, NameAttr: unstable, ArgsAttr: unstable}
		for _, pr := range d.probes {
			for _, in := range insts {
				if in.key.prov != d.name || in.key.pr != pr.name {
					continue
				}
				pv.Probes = append(pv.Probes, dof.Probe{
					Name: usdt.ProbeName(pr.name), Func: in.key.fn,
					NArgs: pr.nargs, XArgs: pr.xargs, Mapping: pr.mapping,
					Offs: in.offs,
				})
			}
		}
		provs = append(provs, pv)
	}
	data, relocs, err = dof.Encode(provs, dof.Options{LP64: lp64, Comment: APIVersion, UTSName: utsname(), Strip: strip})
	return data, relocs, globals, err
}

// asmSymbol matches the names an assembler takes unquoted.
var asmSymbol = regexp.MustCompile(`^[A-Za-z_.$][A-Za-z0-9_.$]*$`)

// dofAssembly is the assembler source of the object -G writes: the DOF
// in a section .SUNW_dof, each probe's dofpr_addr relocated against its
// function when the function is global (a static function cannot be
// named from another object, and its probes' addresses stay 0: the
// DOF's own relocations name it). The section is writable so that a
// position-independent executable needs no text relocation for it.
func dofAssembly(data []byte, relocs []dof.Reloc, globals map[string]bool, lp64 bool) string {
	at := map[uint64]string{}
	for _, r := range relocs {
		if globals[r.Name] && asmSymbol.MatchString(r.Name) {
			at[r.Offset] = r.Name
		}
	}
	var b strings.Builder
	b.WriteString("/* dtrace -G: the DOF of the providers */\n")
	b.WriteString("\t.section .SUNW_dof,\"aw\",@progbits\n\t.balign 8\n")
	var line []string
	flush := func() {
		if len(line) > 0 {
			b.WriteString("\t.byte " + strings.Join(line, ",") + "\n")
			line = line[:0]
		}
	}
	for i := 0; i < len(data); i++ {
		if name, ok := at[uint64(i)]; ok && i+8 <= len(data) {
			flush()
			if lp64 {
				fmt.Fprintf(&b, "\t.quad %s\n", name)
			} else {
				fmt.Fprintf(&b, "\t.long %s\n\t.long 0\n", name)
			}
			i += 7
			continue
		}
		line = append(line, fmt.Sprintf("0x%02x", data[i]))
		if len(line) == 16 {
			flush()
		}
	}
	flush()
	b.WriteString(announceAssembly(lp64))
	b.WriteString("\t.section .note.GNU-stack,\"\",@progbits\n")
	return b.String()
}

// AnnounceOption and AnnounceArg are the prctl(2) option and first
// argument with which a program linked with -G's object announces itself
// at start-up (its constructor): no prctl option has that value, so the
// call fails at once (EINVAL) and changes nothing; a running dtrace
// watching for it (see dtrace/announce_linux.go) holds the process until
// the probes of its providers are enabled, as illumos's drti.o registers
// the providers with the kernel.
const (
	AnnounceOption = 0x44545247 // "DTRG"
	AnnounceArg    = 0x55534454 // "USDT"
)

// announceAssembly is the constructor of -G's object: one prctl system
// call (x86-64: syscall 157; i386: int $0x80, 172), run from .init_array
// before main.
func announceAssembly(lp64 bool) string {
	if lp64 {
		return fmt.Sprintf(`/* dtrace -G: announce the process to a running dtrace */
	.text
	.p2align 4
	.type __dtrace_go_announce, @function
__dtrace_go_announce:
	endbr64
	movl $157, %%eax
	movl $%#x, %%edi
	movl $%#x, %%esi
	xorl %%edx, %%edx
	xorl %%r10d, %%r10d
	xorl %%r8d, %%r8d
	syscall
	ret
	.size __dtrace_go_announce, .-__dtrace_go_announce
	.section .init_array,"aw"
	.p2align 3
	.quad __dtrace_go_announce
`, AnnounceOption, AnnounceArg)
	}
	return fmt.Sprintf(`/* dtrace -G: announce the process to a running dtrace */
	.text
	.p2align 4
	.type __dtrace_go_announce, @function
__dtrace_go_announce:
	endbr32
	pushl %%ebx
	movl $172, %%eax
	movl $%#x, %%ebx
	movl $%#x, %%ecx
	xorl %%edx, %%edx
	int $0x80
	popl %%ebx
	ret
	.size __dtrace_go_announce, .-__dtrace_go_announce
	.section .init_array,"aw"
	.p2align 2
	.long __dtrace_go_announce
`, AnnounceOption, AnnounceArg)
}

// readProviderDecls reads the provider definitions of a -G script ("" for
// none).
func readProviderDecls(script string) ([]dofProviderDecl, error) {
	if script == "" {
		return nil, nil
	}
	text, err := os.ReadFile(script)
	if err != nil {
		return nil, fmt.Errorf("failed to open %s: %s", script, Strerror(err))
	}
	return providerDecls(Source{Name: script, Text: string(text), Script: true})
}
