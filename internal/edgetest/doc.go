// Package edgetest holds the tests of what illumos dtrace does where the
// conformance corpus does not look (issue 25), run against the built
// dtrace command: the first exit() of a run sets the status, stores
// through a cast expression, print() of a void pointer, many strtoll()
// calls in one clause, rate options given as frequencies, ring buffers
// smaller than a clause's records, and every runnable command of
// README.md. TestGuest runs them again in the 6.12 and 6.1 guests of
// ../shared/vm/run-kernel when DTRACE_EDGES_GUEST is set (.ci/run's
// guest step). The package has no code of its own.
package edgetest
