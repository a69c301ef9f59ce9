package symbol

import "sync/atomic"

// reads counts how often the package has read what a process's objects
// are: its mappings, its environment and the dynamic linker's
// configuration. Each costs system calls at start-up; ProcessReads lets
// tests (and -x debug) see that a program pays for them once, and only
// when it needs them.
var reads struct {
	maps, environ, ldSoConf atomic.Int64
}

// ReadCounts are the counts ProcessReads returns.
type ReadCounts struct {
	// Maps is how many times a /proc/PID/maps was read (ReadProcess).
	Maps int64
	// Environ is how many times a /proc/PID/environ was read (for the
	// LD_LIBRARY_PATH of PendingModules).
	Environ int64
	// LdSoConf is how many times /etc/ld.so.conf was parsed.
	LdSoConf int64
}

// ProcessReads returns how often this process has read processes'
// mappings, environments and /etc/ld.so.conf so far.
func ProcessReads() ReadCounts {
	return ReadCounts{Maps: reads.maps.Load(), Environ: reads.environ.Load(), LdSoConf: reads.ldSoConf.Load()}
}
