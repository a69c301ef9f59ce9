// Package dtrace is the dtrace provider: dtrace:::BEGIN (probe 1),
// dtrace:::END (2) and dtrace:::ERROR (3). Its programs are raw tracepoint
// programs that are never attached; the library fires them with
// BPF_PROG_TEST_RUN, passing the probe arguments as the context (an array
// of u64), and the prologue copies them into the machine state.
package dtrace
