// Package tracefs reads what tracefs says about kernel trace events: the
// list of events (available_events) and the record layout of each event
// (events/GROUP/EVENT/format). Providers built on tracepoints use it to
// list probes, to find where each argument sits in the record a
// tracepoint program receives, and to give args[] its C types.
package tracefs
