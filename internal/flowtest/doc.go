// Package flowtest tests flow variables (flow->, flowid; docs/FLOW.md)
// with real processes: a fork, a shell pipeline, a pool of workers
// (testdata/flowprog.c). Its tests need root for BPF.
package flowtest
