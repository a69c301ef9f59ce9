// Package unwind builds the tables the BPF user-stack unwinder reads: it
// parses an object's call-frame information (.eh_frame, .debug_frame:
// CIEs, FDEs, augmentations, DW_CFA_* instructions) and compiles the rules
// x86-64 needs to walk a stack (where the CFA is, where the return address
// and rbp were saved) into rows keyed by file offset. docs/STACKS.md
// describes the design: how tables are built, shared, bounded and dropped,
// and what the BPF side does with them.
package unwind
