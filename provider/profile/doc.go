// Package profile is the profile provider: profile-N fires on every CPU
// and tick-N on one CPU, at a rate given with a suffix (ns nsec us usec ms
// msec s sec m min h hour d day hz; a bare number is hz). Probes are made
// on demand when a description names one (tick-7ms), as in DTrace, and the
// usual set (profile-97 ... tick-5000) always exists.
//
// Each firing is a PERF_EVENT program on a cpu-clock software perf event,
// attached with a BPF link; arg0 is the kernel pc (0 in user mode) and
// arg1 the user pc (0 in the kernel), taken from the interrupted
// registers.
package profile
