// Package kfeature says what the running kernel's BPF offers: the
// instruction set version, BTF, helpers, program and map types and the
// attach types the providers use. The instruction set and BTF are probed
// once, on first use (a program load and a stat, well under a
// millisecond); the rest is probed when a provider first asks, and every
// answer is cached for the life of the process.
//
// Errors name the feature and the kernel release so that the command
// can print them in DTrace's words ("fentry is not supported by kernel
// 6.1.0-56-amd64").
package kfeature
