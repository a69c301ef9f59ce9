// Package kernel holds the small facts about the running Linux kernel that
// the run-time needs before it creates anything: whether the process may
// use BPF and perf events, which CPUs exist and are online, and where
// tracefs is mounted.
package kernel
