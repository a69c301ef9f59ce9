// Package program describes a compiled D program: what the code
// generator produces and what the loader, the consumer and embedders
// read. A Spec holds the clauses (BPF functions), the maps they use, the
// layout of the per-CPU scratch area, the records each clause emits
// (items with their action, offset, size, value kind and, for typed
// items, a layout-level Type), the aggregations (AggSpec with their
// AggDesc: function, parameters, value layout and bucketing) and the
// format strings. It also holds the values decoded from records (Value:
// Int, Float, String, Bytes, Stack, Sym, Verbatim), which the consumer
// makes, the printf package prints and renderers and embedders receive.
//
// It is the contract between compile time and run time, as cilium/ebpf's
// CollectionSpec is beside its live Collection: a Spec depends only on
// the program text and options, never on the running kernel, so it can
// be printed (dtrace -S), compared and tested without one. The package
// imports nothing of this module (internal/abi is the one package it may
// import), so the loader and the
// consumer link neither the D parser nor the checker nor the generator.
package program
