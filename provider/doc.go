// Package provider defines what every DTrace provider offers the run-time:
// probes named provider:module:function:name, found by glob descriptions,
// each with a BPF program type, a prologue that fills the machine state
// from the program context, and a way to attach a loaded program.
//
// A Registry holds the providers of one dtrace session and numbers probes
// from 1 in the order providers were added (the dtrace provider first, so
// BEGIN, END and ERROR are 1, 2 and 3). Probe names follow illumos dtrace,
// and so do the description forms: "name", "func:name", "mod:func:name" and
// "prov:mod:func:name", where an empty field matches anything and every
// field may hold the globs *, ? and [...].
package provider
