// Package loader turns a codegen.Spec and the probes it matched into live
// kernel objects: it creates the maps, builds one BPF program per probe
// (the provider's prologue, then a call to every clause enabled on the
// probe in program order, then the clause functions and the shared
// functions they call), loads and attaches the programs, and keeps the
// never-attached ones (dtrace:::BEGIN, END, ERROR) ready for
// BPF_PROG_TEST_RUN.
//
// Everything is held through file descriptors (maps, programs, BPF links,
// perf events), so a dtrace process that dies leaves nothing in the kernel.
//
// The experiments in experiments_test.go record what this relies on from
// the kernel: test-run raw tracepoint programs with the helpers generated
// code uses, BPF-to-BPF calls, bounded loops, and perf-event programs on
// cpu-clock events attached with BPF_LINK_CREATE.
package loader
