package bpfdis

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/cilium/ebpf/asm"
)

// Listing is a function's code as the kernel receives it, slot by slot,
// with what the code generator knows of each slot.
type Listing struct {
	Slots []Insn
	// Notes and Sources are indexed by slot. Sources[i] is the D source
	// line the code from slot i on was generated for ("line 3: ..."), set
	// where it changes.
	Notes   []Note
	Sources []string
}

// FromInstructions encodes insns as the loader will, resolving jumps and
// BPF-to-BPF calls to labels within insns (calls to functions not in
// insns and map loads keep the placeholders the loader fills in; their
// names are in the notes). A map load that carries its map
// (asm.Instruction.Map) is encoded with the map's file descriptor, as
// cilium/ebpf encodes it for the kernel.
func FromInstructions(insns asm.Instructions) (*Listing, error) {
	slot := make([]int, len(insns))
	labels := map[string]int{}
	n := 0
	for i, ins := range insns {
		slot[i] = n
		if s := ins.Symbol(); s != "" {
			labels[s] = n
		}
		n += int(ins.Size() / asm.InstructionSize)
	}
	l := &Listing{Slots: make([]Insn, 0, n), Notes: make([]Note, n), Sources: make([]string, n)}
	var buf bytes.Buffer
	lastSrc := ""
	for i, ins := range insns {
		s := slot[i]
		ref := ins.Reference()
		isJump := ins.OpCode.Class().IsJump() && !ins.IsFunctionCall() && !ins.IsKfuncCall() &&
			ins.OpCode.JumpOp() != asm.Call && ins.OpCode.JumpOp() != asm.Exit
		if target, ok := labels[ref]; ok && ref != "" {
			switch {
			case isJump && ins.OpCode.Class() == asm.Jump32Class && ins.OpCode.JumpOp() == asm.Ja:
				ins.Constant = int64(target - s - 1)
			case isJump:
				ins.Offset = int16(target - s - 1)
			case ins.IsFunctionCall():
				ins.Constant = int64(target - s - 1)
				l.Notes[s].Value = strconv.Itoa(target)
			}
		}
		if isJump {
			l.Notes[s].Label = ref
		} else {
			l.Notes[s].Name = ref
		}
		if m := ins.Map(); m != nil && ins.IsLoadFromMap() {
			fd := m.FD()
			// The descriptor in the low word; a direct value load
			// keeps its offset in the high one.
			ins.Constant = int64(uint64(ins.Constant)&^0xffffffff | uint64(uint32(fd)))
			l.Notes[s].Value = strconv.Itoa(fd)
		}
		if src := ins.Source(); src != nil {
			if line := strings.TrimSpace(src.String()); line != "" && line != lastSrc {
				l.Sources[s] = line
				lastSrc = line
			}
		}
		buf.Reset()
		if _, err := ins.Marshal(&buf, binary.LittleEndian); err != nil {
			return nil, fmt.Errorf("instruction %d (%v): %w", s, ins, err)
		}
		b := buf.Bytes()
		for len(b) >= asm.InstructionSize {
			l.Slots = append(l.Slots, Insn{
				Code: b[0], Dst: b[1] & 0x0f, Src: b[1] >> 4,
				Off: int16(binary.LittleEndian.Uint16(b[2:])),
				Imm: int32(binary.LittleEndian.Uint32(b[4:])),
			})
			b = b[asm.InstructionSize:]
		}
	}
	return l, nil
}

// Write writes the column headings and a line per slot; a source line
// annotation, where the code of a new D line starts, is a comment line
// of its own at the instruction column.
func (l *Listing) Write(w io.Writer) {
	fmt.Fprintln(w, Columns)
	indent := strings.Repeat(" ", len(Prefix(0, Insn{})))
	for i := 0; i < len(l.Slots); i++ {
		if l.Sources[i] != "" {
			fmt.Fprintf(w, "%s! %s\n", indent, l.Sources[i])
		}
		text, skip := Format(l.Slots, i, l.Notes[i], Helper)
		fmt.Fprintf(w, "%s%s\n", Prefix(i, l.Slots[i]), text)
		i += skip
	}
}

// WriteRelocs writes the table of the slots the loader completes (map
// loads and calls by name), as dt_dis.c writes a DIFO's BPF
// relocations: byte offset, value (*UND*: not known before loading) and
// name.
func (l *Listing) WriteRelocs(w io.Writer) {
	first := true
	for i, n := range l.Notes {
		if n.Name == "" || i >= len(l.Slots) {
			continue
		}
		kind := "R_BPF_NONE"
		switch in := l.Slots[i]; {
		case in.Code == clsLD|modeIMM|0x18:
			kind = "R_BPF_INSN_64"
		case in.Code == clsJMP|opCall:
			kind = "R_BPF_INSN_DISP32"
		}
		if first {
			fmt.Fprintf(w, "\n%-17s %-8s %-8s %s\n", "BPF", "OFFSET", "VALUE", "NAME")
			first = false
		}
		v := n.Value
		if v == "" {
			v = "*UND*"
		}
		fmt.Fprintf(w, "%-17s %-8d %-8s %s\n", kind, i*8, v, n.Name)
	}
}

// Helper returns the kernel's name of helper id ("bpf_map_lookup_elem"),
// or "" for an id cilium/ebpf does not know.
func Helper(id int32) string {
	if id < 0 {
		return ""
	}
	name := (asm.FnUnspec + asm.BuiltinFunc(id)).String()
	if !strings.HasPrefix(name, "Fn") {
		return ""
	}
	var b strings.Builder
	b.WriteString("bpf_")
	for i, r := range name[2:] {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
