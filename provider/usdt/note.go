package usdt

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/symbol"
)

// NoteSection and NoteType identify SystemTap SDT notes (sys/sdt.h).
const (
	NoteSection = ".note.stapsdt"
	NoteOwner   = "stapsdt"
	NoteType    = 3
	baseSection = ".stapsdt.base"
)

// Note is one probe site of sys/sdt.h: where it is, its semaphore and how
// to find its arguments.
type Note struct {
	Provider, Name string
	// PC, Base and Semaphore are link-time addresses as the note records
	// them (Semaphore 0: none).
	PC, Base, Semaphore uint64
	Args                []Arg
	// ArgError is set when an argument specification could not be
	// parsed; the arguments from there on read as 0.
	ArgError error
}

// ParseNote decodes a stapsdt note descriptor of a 64-bit object: pc,
// base and semaphore (u64 each), then the provider, name and argument
// strings, each NUL terminated.
func ParseNote(desc []byte) (Note, error) { return ParseClassNote(desc, elf.ELFCLASS64) }

// ParseClassNote is ParseNote for an object of the given class: in a
// 32-bit one (gcc -m32) pc, base and semaphore are u32 each.
func ParseClassNote(desc []byte, class elf.Class) (Note, error) {
	var n Note
	w := 8
	if class == elf.ELFCLASS32 {
		w = 4
	}
	if len(desc) < 3*w {
		return n, errors.New("stapsdt note too short")
	}
	word := func(b []byte) uint64 {
		if w == 4 {
			return uint64(binary.LittleEndian.Uint32(b))
		}
		return binary.LittleEndian.Uint64(b)
	}
	n.PC = word(desc)
	n.Base = word(desc[w:])
	n.Semaphore = word(desc[2*w:])
	parts := strings.SplitN(string(desc[3*w:]), "\x00", 4)
	if len(parts) < 3 {
		return n, errors.New("stapsdt note strings truncated")
	}
	n.Provider, n.Name = parts[0], parts[1]
	n.Args, n.ArgError = ParseArgs(parts[2])
	return n, nil
}

// Notes returns the SDT notes of an object with their addresses adjusted
// for prelinking: the note records the address .stapsdt.base had at link
// time, and every address moves with it.
func Notes(obj *symbol.Object) ([]Note, error) {
	raw, err := obj.Notes(NoteSection)
	if err != nil {
		return nil, err
	}
	base, hasBase := obj.Section(baseSection)
	var out []Note
	for _, r := range raw {
		if r.Owner != NoteOwner || r.Type != NoteType {
			continue
		}
		n, err := ParseClassNote(r.Desc, r.Class)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", obj.Path, err)
		}
		if hasBase && n.Base != 0 && base.Addr != n.Base {
			d := base.Addr - n.Base
			n.PC += d
			if n.Semaphore != 0 {
				n.Semaphore += d
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// SemaphoreSize is the width of a sys/sdt.h semaphore (unsigned short).
const SemaphoreSize = 2

// SemaphoreOffset returns the file offset of a note's semaphore, the
// ref_ctr_offset of its uprobes, when the semaphore lies within a
// writable loadable segment of obj: the only memory the kernel is asked
// to write in a traced process. Another address is refused.
func SemaphoreOffset(obj *symbol.Object, vaddr uint64) (uint64, bool) {
	return obj.WritableOffset(vaddr, SemaphoreSize)
}

// ProbeName turns an SDT name into a DTrace probe name: a double
// underscore becomes a dash, as dtrace -h does the other way round.
func ProbeName(s string) string { return strings.ReplaceAll(s, "__", "-") }

// ArgKind tells where an argument lives.
type ArgKind int

// The kinds of argument.
const (
	ArgConst ArgKind = iota // $value
	ArgReg                  // %reg
	ArgMem                  // disp(%base,%index,scale)
)

// Arg is one parsed argument specification, such as "-4@%eax",
// "8@-16(%rbp)" or "4@$5".
type Arg struct {
	Kind ArgKind
	// Size is 1, 2, 4 or 8 bytes; Signed asks for sign extension.
	Size   int
	Signed bool
	// Value is the constant of ArgConst.
	Value int64
	// Reg is the register of ArgReg, or the base of ArgMem (may be "");
	// Shift is 8 for the high-byte registers ah, bh, ch and dh.
	Reg   string
	Shift int
	// Disp, Index and Scale complete ArgMem: Disp+Reg+Index*Scale.
	// Addr32: the base and index are 32-bit registers (an i386 program,
	// or addr32 code): the address is the sum's low 32 bits.
	Disp   int64
	Index  string
	Scale  int
	Addr32 bool
	// Sym is a symbol the displacement is relative to ("counter" in
	// "4@counter(%rip)"): the address is the symbol's, plus Disp.
	Sym string
}

// ParseArgs parses a space-separated list of argument specifications.
func ParseArgs(s string) ([]Arg, error) {
	var out []Arg
	for _, f := range strings.Fields(s) {
		a, err := ParseArg(f)
		if err != nil {
			return out, fmt.Errorf("argument %d %q: %w", len(out), f, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// ParseArg parses one x86-64 argument specification, "[-]SIZE@OPERAND"
// (a bare operand is an unsigned 8-byte value).
func ParseArg(s string) (Arg, error) {
	a := Arg{Size: 8}
	if at := strings.IndexByte(s, '@'); at >= 0 {
		sz := s[:at]
		if strings.HasPrefix(sz, "-") {
			a.Signed = true
			sz = sz[1:]
		}
		n, err := strconv.Atoi(sz)
		if err != nil || (n != 1 && n != 2 && n != 4 && n != 8) {
			return a, fmt.Errorf("bad size %q", s[:at])
		}
		a.Size = n
		s = s[at+1:]
	}
	switch {
	case strings.HasPrefix(s, "$"):
		v, err := parseInt(s[1:])
		if err != nil {
			return a, err
		}
		a.Kind, a.Value = ArgConst, v
		return a, nil
	case strings.HasPrefix(s, "%"):
		reg, shift, size, ok := register(s[1:])
		if !ok {
			return a, fmt.Errorf("unknown register %q", s)
		}
		a.Kind, a.Reg, a.Shift = ArgReg, reg, shift
		if a.Size > size {
			// "8@%eax": the register holds no more than its width.
			a.Size = size
		}
		return a, nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return a, errors.New("unknown operand")
	}
	a.Kind = ArgMem
	if disp := s[:open]; disp != "" {
		if v, err := parseInt(disp); err == nil {
			a.Disp = v
		} else {
			// sym, sym+off or sym-off
			sym, off := disp, ""
			if i := strings.LastIndexAny(disp, "+-"); i > 0 {
				sym, off = disp[:i], disp[i:]
			}
			if off != "" {
				v, err := parseInt(strings.TrimPrefix(off, "+"))
				if err != nil {
					return a, fmt.Errorf("bad displacement %q", disp)
				}
				a.Disp = v
			}
			a.Sym = sym
		}
	}
	parts := strings.Split(s[open+1:len(s)-1], ",")
	if len(parts) > 3 {
		return a, errors.New("bad memory operand")
	}
	if p := strings.TrimSpace(parts[0]); p != "" {
		reg, shift, size, ok := register(strings.TrimPrefix(p, "%"))
		if !ok || shift != 0 || size != 8 && size != 4 || !strings.HasPrefix(p, "%") {
			return a, fmt.Errorf("bad base register %q", p)
		}
		a.Reg, a.Addr32 = reg, size == 4
	}
	if len(parts) >= 2 {
		p := strings.TrimSpace(parts[1])
		reg, shift, size, ok := register(strings.TrimPrefix(p, "%"))
		if !ok || shift != 0 || size != 8 && size != 4 || !strings.HasPrefix(p, "%") || a.Reg != "" && a.Addr32 != (size == 4) {
			return a, fmt.Errorf("bad index register %q", p)
		}
		a.Index, a.Scale, a.Addr32 = reg, 1, size == 4
		if len(parts) == 3 {
			sc, err := strconv.Atoi(strings.TrimSpace(parts[2]))
			if err != nil || (sc != 1 && sc != 2 && sc != 4 && sc != 8) {
				return a, fmt.Errorf("bad scale %q", parts[2])
			}
			a.Scale = sc
		}
	}
	if a.Reg == "" && a.Index == "" && a.Sym == "" {
		return a, errors.New("absolute addresses are not supported")
	}
	return a, nil
}

func parseInt(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("bad number %q", s)
	}
	if neg {
		return -int64(v), nil
	}
	return int64(v), nil
}

// register maps an x86-64 register name to the 64-bit register holding
// it, the bit shift of its low byte and its width in bytes.
func register(name string) (reg string, shift, size int, ok bool) {
	if r, ok := regs64[name]; ok {
		return r, 0, 8, true
	}
	legacy := map[string]string{"a": "rax", "b": "rbx", "c": "rcx", "d": "rdx"}
	switch {
	case len(name) == 3 && name[0] == 'e' && name[2] == 'x' && legacy[name[1:2]] != "":
		return legacy[name[1:2]], 0, 4, true
	case len(name) == 2 && name[1] == 'x' && legacy[name[:1]] != "":
		return legacy[name[:1]], 0, 2, true
	case len(name) == 2 && name[1] == 'l' && legacy[name[:1]] != "":
		return legacy[name[:1]], 0, 1, true
	case len(name) == 2 && name[1] == 'h' && legacy[name[:1]] != "":
		return legacy[name[:1]], 8, 1, true
	}
	idx := map[string]string{"si": "rsi", "di": "rdi", "bp": "rbp", "sp": "rsp"}
	switch {
	case len(name) == 3 && name[0] == 'e' && idx[name[1:]] != "":
		return idx[name[1:]], 0, 4, true
	case len(name) == 2 && idx[name] != "":
		return idx[name], 0, 2, true
	case len(name) == 3 && name[2] == 'l' && idx[name[:2]] != "":
		return idx[name[:2]], 0, 1, true
	}
	if strings.HasPrefix(name, "r") {
		for _, suf := range []struct {
			s    string
			size int
		}{{"d", 4}, {"w", 2}, {"b", 1}, {"l", 1}} {
			if base := strings.TrimSuffix(name, suf.s); base != name {
				if _, ok := regs64[base]; ok && base[1] >= '0' && base[1] <= '9' {
					return base, 0, suf.size, true
				}
			}
		}
	}
	return "", 0, 0, false
}

var regs64 = map[string]string{
	"rax": "rax", "rbx": "rbx", "rcx": "rcx", "rdx": "rdx", "rsi": "rsi", "rdi": "rdi",
	"rbp": "rbp", "rsp": "rsp", "rip": "rip",
	"r8": "r8", "r9": "r9", "r10": "r10", "r11": "r11", "r12": "r12", "r13": "r13",
	"r14": "r14", "r15": "r15",
}
