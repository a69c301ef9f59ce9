package pid

import "errors"

// errDecode says that an instruction could not be decoded.
var errDecode = errors.New("cannot decode instruction")

// insnLen returns the length of the x86-64 instruction at the start of b.
// It knows the encodings compilers emit (legacy prefixes, REX, the one-,
// two- and three-byte opcode maps, VEX and EVEX) and only lengths: the
// pid provider needs instruction boundaries, to refuse probes in the
// middle of an instruction (a breakpoint there would corrupt the traced
// program) and to list every instruction of a function for name globs.
func insnLen(b []byte) (int, error) {
	i := 0
	opsize16, addr32 := false, false
	rexW := false
	// Legacy prefixes, in any order and number (at most 15 bytes in all).
	for ; i < len(b) && i < 14; i++ {
		switch b[i] {
		case 0x66:
			opsize16 = true
			continue
		case 0x67:
			addr32 = true
			continue
		case 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
			continue
		case 0x9b:
			// fwait before an x87 instruction: one instruction to objdump
			// (fstcw is fwait; fnstcw), and a probe between them is
			// pointless.
			if i+1 < len(b) && b[i+1] >= 0xd8 && b[i+1] <= 0xdf {
				continue
			}
		}
		break
	}
	if i < len(b) && b[i]&0xf0 == 0x40 {
		rexW = b[i]&8 != 0
		i++
	}
	if i >= len(b) {
		return 0, errDecode
	}
	immz := 4
	if opsize16 {
		immz = 2
	}
	op := b[i]
	i++
	var modrm bool
	imm := 0
	switch op {
	case 0x0f:
		return twoByte(b, i, immz)
	case 0xc4, 0xc5, 0x62:
		return vex(b, i-1)
	}
	switch {
	case op < 0x40 && op&7 < 4:
		modrm = true
	case op < 0x40 && op&7 == 4:
		imm = 1
	case op < 0x40 && op&7 == 5:
		imm = immz
	case op < 0x40:
		// push/pop of segment registers and BCD ops: invalid in 64-bit
		// mode (the prefixes were taken above).
		return 0, errDecode
	case op >= 0x50 && op <= 0x5f, op >= 0x6c && op <= 0x6f, op >= 0x90 && op <= 0x99,
		op >= 0x9b && op <= 0x9f, op >= 0xa4 && op <= 0xa7, op >= 0xaa && op <= 0xaf,
		op == 0xc3, op == 0xc9, op == 0xcb, op == 0xcc, op == 0xcf, op == 0xd7,
		op >= 0xec && op <= 0xef, op == 0xf1, op == 0xf4, op == 0xf5, op >= 0xf8 && op <= 0xfd:
	case op == 0x63, op >= 0x84 && op <= 0x8f, op >= 0xd0 && op <= 0xd3, op >= 0xd8 && op <= 0xdf,
		op == 0xfe, op == 0xff:
		modrm = true
	case op == 0x68:
		imm = immz
	case op == 0x69:
		modrm, imm = true, immz
	case op == 0x6a, op >= 0x70 && op <= 0x7f, op == 0xa8, op >= 0xb0 && op <= 0xb7,
		op == 0xcd, op >= 0xe0 && op <= 0xe7, op == 0xeb:
		imm = 1
	case op == 0x6b, op == 0x80, op == 0x83, op == 0xc0, op == 0xc1, op == 0xc6:
		modrm, imm = true, 1
	case op == 0x81, op == 0xc7:
		modrm, imm = true, immz
	case op >= 0xa0 && op <= 0xa3:
		imm = 8
		if addr32 {
			imm = 4
		}
	case op == 0xa9:
		imm = immz
	case op >= 0xb8 && op <= 0xbf:
		imm = immz
		if rexW {
			imm = 8
		}
	case op == 0xc2, op == 0xca:
		imm = 2
	case op == 0xc8:
		imm = 3
	case op == 0xe8, op == 0xe9:
		imm = 4
	case op == 0xf6, op == 0xf7:
		if i >= len(b) {
			return 0, errDecode
		}
		modrm = true
		if (b[i]>>3)&7 < 2 { // test r/m, imm
			imm = 1
			if op == 0xf7 {
				imm = immz
			}
		}
	default:
		return 0, errDecode
	}
	return operands(b, i, modrm, imm)
}

// twoByte decodes the rest of an instruction whose opcode starts with 0f,
// b[i] being the byte after it.
func twoByte(b []byte, i, immz int) (int, error) {
	if i >= len(b) {
		return 0, errDecode
	}
	op := b[i]
	i++
	modrm, imm := true, 0
	switch {
	case op == 0x38:
		i++ // the third opcode byte; ModRM follows
	case op == 0x3a:
		i++
		imm = 1
	case op == 0x05, op == 0x06, op == 0x07, op == 0x08, op == 0x09, op == 0x0b, op == 0x0e,
		op >= 0x30 && op <= 0x37, op == 0x77, op == 0xa0, op == 0xa1, op == 0xa2,
		op == 0xa8, op == 0xa9, op == 0xaa, op >= 0xc8 && op <= 0xcf:
		modrm = false
	case op >= 0x80 && op <= 0x8f:
		modrm, imm = false, immz
		if immz == 2 {
			imm = 4 // jcc rel32 ignores the operand-size prefix in 64-bit mode
		}
	case op >= 0x70 && op <= 0x73, op == 0xa4, op == 0xac, op == 0xba, op == 0xc2,
		op >= 0xc4 && op <= 0xc6, op == 0x0f:
		imm = 1
	case op == 0x04, op == 0x0a, op == 0x0c, op == 0x24, op == 0x25, op == 0x26, op == 0x27,
		op == 0x36, op == 0x39, op >= 0x3b && op <= 0x3f, op == 0x7a, op == 0x7b, op == 0xa6, op == 0xa7:
		return 0, errDecode
	}
	return operands(b, i, modrm, imm)
}

// vex decodes a VEX (c4, c5) or EVEX (62) instruction starting at b[i]:
// the prefix bytes, the opcode, a ModRM and an immediate byte for the
// 0f3a map and the few 0f opcodes that take one.
func vex(b []byte, i int) (int, error) {
	var m byte
	evex := b[i] == 0x62
	switch b[i] {
	case 0xc5:
		m, i = 1, i+2
	case 0xc4:
		if i+1 >= len(b) {
			return 0, errDecode
		}
		m, i = b[i+1]&0x1f, i+3
	case 0x62:
		if i+1 >= len(b) {
			return 0, errDecode
		}
		m, i = b[i+1]&7, i+4
	}
	if i >= len(b) {
		return 0, errDecode
	}
	op := b[i]
	i++
	if m == 1 && op == 0x77 && !evex {
		// vzeroupper, vzeroall: no ModRM.
		return i, nil
	}
	imm := 0
	if m == 3 || m == 1 && (op >= 0x70 && op <= 0x73 || op == 0xc2 || op >= 0xc4 && op <= 0xc6) {
		imm = 1
	}
	return operands(b, i, true, imm)
}

// operands returns the length of an instruction whose opcode ends before
// b[i]: then come a ModRM byte (with the SIB byte and displacement it
// implies) if modrm, and imm bytes of immediate. An instruction longer
// than b or than 15 bytes is errDecode.
func operands(b []byte, i int, modrm bool, imm int) (int, error) {
	if modrm {
		n, err := modrmLen(b, i)
		if err != nil {
			return 0, err
		}
		i += n
	}
	i += imm
	if i > len(b) || i > 15 {
		return 0, errDecode
	}
	return i, nil
}

// modrmLen returns the length of the ModRM byte at b[i] and of the SIB
// byte and displacement it implies (64- and 32-bit addressing share the
// form).
func modrmLen(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errDecode
	}
	mod, rm := b[i]>>6, b[i]&7
	n := 1
	if mod == 3 {
		return n, nil
	}
	if rm == 4 {
		if i+1 >= len(b) {
			return 0, errDecode
		}
		n++
		if mod == 0 && b[i+1]&7 == 5 {
			n += 4
		}
	} else if mod == 0 && rm == 5 {
		n += 4 // rip-relative
	}
	switch mod {
	case 1:
		n++
	case 2:
		n += 4
	}
	return n, nil
}

// Instructions returns the offsets of the instructions of code, decoded
// one after the other from its start, and an error where decoding stops
// short of the end.
func Instructions(code []byte) ([]uint64, error) {
	var offs []uint64
	for off := 0; off < len(code); {
		n, err := insnLen(code[off:])
		if err != nil {
			return offs, err
		}
		offs = append(offs, uint64(off))
		off += n
	}
	return offs, nil
}

// Exit is an instruction by which a function leaves.
type Exit struct {
	// Off is its offset in the function.
	Off uint64
	// Cond is 0 for a ret or jmp, and 1 + the condition code (the low
	// nibble of the opcode) for a conditional jump, which leaves only
	// when taken.
	Cond uint8
}

// Returns returns the instructions by which the function whose bytes are
// code leaves: its rets (c3, ret imm16 c2, and their prefixed forms rep
// ret and bnd ret) and its tail calls, the direct jumps whose target is
// outside the function, where its frame is gone as after a ret (illumos
// fasttrap places return probes there too): jmp (e9, eb) and the
// conditional jumps (0f 80-8f, 70-7f) compilers also use for tail calls.
// Indirect jmps are not returns here: a jump table's and a tail call
// through a pointer cannot be told apart.
func Returns(code []byte) ([]Exit, error) {
	offs, err := Instructions(code)
	if err != nil {
		return nil, err
	}
	var exits []Exit
	for i, o := range offs {
		off, n := int(o), len(code)-int(o)
		if i+1 < len(offs) {
			n = int(offs[i+1] - o)
		}
		insn := code[off : off+n]
		j := 0
		for j < len(insn) && isLegacyPrefix(insn[j]) {
			j++
		}
		if j < len(insn) && insn[j]&0xf0 == 0x40 {
			j++ // REX
		}
		if j >= len(insn) {
			return nil, errDecode
		}
		op, rest := insn[j], insn[j+1:]
		var rel int64
		cond, jump := uint8(0), false
		switch {
		case op == 0xc3 || op == 0xc2:
			exits = append(exits, Exit{Off: uint64(off)})
		case op == 0xe9 && len(rest) == 4:
			rel, jump = rel32(rest), true
		case op == 0xeb && len(rest) == 1:
			rel, jump = int64(int8(rest[0])), true
		case op >= 0x70 && op <= 0x7f && len(rest) == 1:
			rel, jump, cond = int64(int8(rest[0])), true, op&0xf+1
		case op == 0x0f && len(rest) == 5 && rest[0] >= 0x80 && rest[0] <= 0x8f:
			rel, jump, cond = rel32(rest[1:]), true, rest[0]&0xf+1
		}
		if target := int64(off+n) + rel; jump && (target < 0 || target >= int64(len(code))) {
			exits = append(exits, Exit{Off: uint64(off), Cond: cond})
		}
	}
	return exits, nil
}

func rel32(b []byte) int64 {
	return int64(int32(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24))
}

// RefusedPrefix reports whether the x86-64 instruction at the start of
// code has a prefix with which Linux's uprobes refuse it: lock, or a
// segment override of es, cs, ss or ds (ds is also CET's notrack).
func RefusedPrefix(code []byte) bool {
	for i := 0; i < len(code) && i < 14 && isLegacyPrefix(code[i]); i++ {
		switch code[i] {
		case 0xf0, 0x26, 0x2e, 0x36, 0x3e:
			return true
		}
	}
	return false
}

func isLegacyPrefix(b byte) bool {
	switch b {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65:
		return true
	}
	return false
}

// CallerSlot returns where the return address lies, relative to the stack
// pointer, when the instruction at offset off of the function whose bytes
// are code is about to run, while the function's frame is not linked yet
// (a frame-pointer walk from %rbp then skips the caller): 0 up to the
// push %rbp (endbr64 may come first), 8 after it until mov %rsp,%rbp.
// ok is false once the frame is linked or when the prologue is not the
// standard one (nothing is known then).
func CallerSlot(code []byte, off uint64) (slot int16, ok bool) {
	pos := uint64(0)
	for pos < off {
		rest := code[pos:]
		switch {
		case len(rest) >= 4 && rest[0] == 0xf3 && rest[1] == 0x0f && rest[2] == 0x1e && rest[3] == 0xfa && slot == 0:
			pos += 4 // endbr64
		case len(rest) >= 1 && rest[0] == 0x55 && slot == 0:
			pos, slot = pos+1, 8 // push %rbp
		case len(rest) >= 3 && slot == 8 && (rest[0] == 0x48 && rest[1] == 0x89 && rest[2] == 0xe5 || rest[0] == 0x48 && rest[1] == 0x8b && rest[2] == 0xec):
			return 0, false // mov %rsp,%rbp: the frame is linked
		default:
			return 0, false
		}
	}
	return slot, pos == off
}

// Misemulated reports whether the kernel's x86 uprobes would emulate the
// instruction at the start of code rather than single-step it, and so
// change what the traced program computes. Linux decides how to run a
// probed instruction from its first opcode byte alone, whatever prefix
// comes before (arch/x86/kernel/uprobes.c, branch_setup_xol_ops and
// push_setup_xol_ops): after a VEX (c4, c5) or EVEX (62) prefix, the
// opcode bytes of jcc rel8 (70-7f), nop (90), call, jmp (e8, e9, eb) and
// push (50-57) are taken for those instructions. vpbroadcastb
// %esi,%ymm16 (62 e2 7d 28 7a c6, the first instruction of glibc's EVEX
// strchr family) then runs as a jp that never executes the broadcast,
// and printf, finding no '%' in its format, prints it as it is. The
// other VEX opcodes are single-stepped, or refused (Unsupported).
func Misemulated(code []byte) bool {
	i := 0
	for i < len(code) && i < 14 && isLegacyPrefix(code[i]) {
		i++
	}
	if i >= len(code) {
		return false
	}
	switch code[i] {
	case 0xc5:
		i += 2
	case 0xc4:
		i += 3
	case 0x62:
		i += 4
	default:
		return false
	}
	if i >= len(code) {
		return false
	}
	switch op := code[i]; {
	case op >= 0x50 && op <= 0x57, op >= 0x70 && op <= 0x7f:
		return true
	case op == 0x90, op == 0xe8, op == 0xe9, op == 0xeb:
		return true
	}
	return false
}

// IndirectOnly reports whether the function whose bytes are code leaves
// only by indirect jumps (jmp *reg or *mem: ff /4, ff /5), having no
// instruction Returns counts. It has then no return probe, as in illumos,
// whose return probes are on the instructions that leave: an indirect jmp
// may be a jump table as well as a tail call. Nor can it have a uretprobe
// instead, which replaces the return address on top of the stack at
// entry: such functions are often entered by a jump, not a call, with
// something else there (the dynamic linker's _dl_runtime_resolve, entered
// from the PLT with the link map and relocation index on top, then crashes
// the program).
func IndirectOnly(code []byte) bool {
	exits, err := Returns(code)
	if err != nil || len(exits) > 0 {
		return false
	}
	offs, _ := Instructions(code)
	for _, o := range offs {
		insn := code[o:]
		j := 0
		for j < len(insn) && isLegacyPrefix(insn[j]) {
			j++
		}
		if j < len(insn) && insn[j]&0xf0 == 0x40 {
			j++ // REX
		}
		if j+1 < len(insn) && insn[j] == 0xff {
			if reg := insn[j+1] >> 3 & 7; reg == 4 || reg == 5 {
				return true
			}
		}
	}
	return false
}
