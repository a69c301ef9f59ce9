// Package kerneltest tests dtrace on kernels other than this machine's.
// TestSmoke61 boots Debian 12's 6.1 kernel (ISA v3: no sign-extending
// instructions) with ../shared/vm/run-kernel and checks that one dtrace
// binary prints there what it prints here: BEGIN, json(), an exact syscall
// count under -c, profile and a pid probe. TestNoBTF runs dtrace here as
// on a kernel without /sys/kernel/btf/vmlinux. .ci/run runs the package
// as its own timed step.
package kerneltest
