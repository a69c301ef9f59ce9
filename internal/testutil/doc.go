// Package testutil holds, below it, the scaffolding that tests share:
// building test programs (testprog), tracing them through the library
// (tracetest), running a guest kernel (guesttest), checking that nothing
// stays attached (leakcheck), checker and BPF object helpers (checktest,
// bpfobj) and the output tests' parser (outtest). Production code never
// imports it: the layering test in package program fails if it does.
package testutil
