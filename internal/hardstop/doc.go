// Package hardstop holds the tests of dtrace under hard stops and
// contention, run against the built dtrace command: eight consumers
// tracing one process each count every event; SIGINT and SIGTERM end a
// run as DTrace ends it (END fires, aggregations print, exit 0); SIGKILL
// at any moment leaves no BPF program, map, link or uprobe behind; and a
// USDT semaphore is back to its old value once dtrace is gone. The
// package has no code of its own.
package hardstop
