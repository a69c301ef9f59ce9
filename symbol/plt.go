package symbol

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// PLT stubs have no symbol in any table: a sample taken in one (a loop
// that calls clock_gettime through the PLT spends some of its time there)
// would print as module`0xADDR. Like gdb and perf, we name each stub
// after the function it jumps to, name@plt, from the relocation of the
// GOT slot its indirect jump reads. The stubs are found by decoding each
// 16-byte entry of .plt, .plt.sec and .plt.got (8-byte entries there
// too) for its `jmp *disp32(%rip)`, so that neither the order of the
// relocations nor the entry layout (lazy, IBT, BND) is assumed. Only
// x86-64 is read; the stubs are kept apart from the functions, so the
// pid provider does not list them as functions of the object.

// pltStubs returns the PLT stubs of f, sorted by address, each with its
// size; f may say anything, so every read is bounded by what it holds.
func pltStubs(f *elf.File) []Func {
	if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
		return nil
	}
	slots := gotSlots(f)
	if len(slots) == 0 {
		return nil
	}
	var stubs []Func
	for _, name := range []string{".plt", ".plt.sec", ".plt.got"} {
		s := f.Section(name)
		if s == nil || s.Type != elf.SHT_PROGBITS || s.Size > 1<<24 {
			continue
		}
		code, err := s.Data()
		if err != nil {
			continue
		}
		entry := uint64(16)
		if name == ".plt.got" && s.Entsize == 8 {
			entry = 8
		}
		for off := uint64(0); off+entry <= uint64(len(code)); off += entry {
			at := s.Addr + off
			if got, ok := jumpSlot(code[off:off+entry], at); ok {
				if sym, ok := slots[got]; ok {
					stubs = append(stubs, Func{Name: sym + "@plt", Value: at, Size: entry, Bind: elf.STB_LOCAL})
				}
			}
		}
	}
	sort.Slice(stubs, func(i, j int) bool { return stubs[i].Value < stubs[j].Value })
	return stubs
}

// jumpSlot finds the first `jmp *disp32(%rip)` (ff 25, after an
// endbr64 or a bnd prefix where the entry has them) of a PLT entry at
// address at, and returns the GOT address it reads.
func jumpSlot(code []byte, at uint64) (uint64, bool) {
	for i := 0; i+6 <= len(code); i++ {
		if code[i] == 0xff && code[i+1] == 0x25 {
			disp := int32(binary.LittleEndian.Uint32(code[i+2:]))
			return at + uint64(i) + 6 + uint64(int64(disp)), true
		}
	}
	return 0, false
}

// gotSlots maps the GOT slots that dynamic relocations fill with a
// function's address (JUMP_SLOT in .rela.plt, GLOB_DAT in .rela.dyn for
// .plt.got) to the function's name.
func gotSlots(f *elf.File) map[uint64]string {
	syms, err := f.DynamicSymbols()
	if err != nil || len(syms) == 0 {
		return nil
	}
	slots := map[uint64]string{}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || s.Size > 1<<24 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for off := 0; off+24 <= len(b); off += 24 {
			addr := binary.LittleEndian.Uint64(b[off:])
			info := binary.LittleEndian.Uint64(b[off+8:])
			typ, idx := elf.R_X86_64(info&0xffffffff), info>>32
			if typ != elf.R_X86_64_JMP_SLOT && typ != elf.R_X86_64_GLOB_DAT {
				continue
			}
			// DynamicSymbols leaves out the null symbol at index 0.
			if idx == 0 || idx > uint64(len(syms)) {
				continue
			}
			if sym := syms[idx-1]; sym.Name != "" && elf.ST_TYPE(sym.Info) != elf.STT_OBJECT {
				slots[addr] = sym.Name
			}
		}
	}
	return slots
}

// lookupPLT returns the PLT stub containing vaddr.
func (o *Object) lookupPLT(vaddr uint64) (Func, bool) {
	i := sort.Search(len(o.plts), func(i int) bool { return o.plts[i].Value > vaddr })
	if i == 0 || vaddr >= o.plts[i-1].limit() {
		return Func{}, false
	}
	return o.plts[i-1], true
}
