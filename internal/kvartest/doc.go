// Package kvartest holds the end-to-end tests of backquoted kernel
// variables (`max_pfn, `nr_cpu_ids, stringof(`linux_banner),
// module`name): they build cmd/dtrace and run it on this machine and, with
// ../shared/vm/run-kernel, in a guest booted on Debian's 6.12 kernel, whose
// kallsyms lists the data symbols this machine's kernel does not.
//
// The package has no code of its own; go test ./internal/kvartest runs the
// tests, and -run Guest only those that boot the guest.
package kvartest
