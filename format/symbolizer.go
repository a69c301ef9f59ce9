package format

// Symbolizer resolves addresses to symbols for %a, %A, stack(), ustack(),
// sym() and friends. ok=false means nothing is known about the address;
// ok=true with an empty fn means only the containing module (object) is
// known. off is addr minus the symbol's start address.
type Symbolizer interface {
	KernelSym(addr uint64) (mod, fn string, off uint64, ok bool)
	UserSym(pid int, addr uint64) (obj, fn string, off uint64, ok bool)
}

// LineSymbolizer is a Symbolizer that also knows source lines: the file
// and line of a user address, from the debug information of the object
// mapped there (pprof's locations carry them).
type LineSymbolizer interface {
	UserLine(pid int, addr uint64) (file string, line int, ok bool)
}
