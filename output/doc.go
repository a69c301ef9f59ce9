// Package output holds what the consumer hands to output: typed events
// (records of probe firings and their items, faults, library errors,
// drops, the final aggregations) and the Renderer interface that turns
// them into output. Package output/text is dtrace(1M)'s text, byte for
// byte; other formats (JSON Lines, timelines, folded stacks, profiles,
// metrics) are further renderers of the same events.
//
// The consumer (package consumer) reads the kernel's buffers, decodes
// each record by its EPID and runs the library's side of the actions
// (exit, clear, trunc, normalize, setopt, speculations, freopen,
// system) in record order, calling the renderer for each item as it
// goes: an item's values, aggregation snapshots included, are those at
// its place in the record. Events and their slices are reused from one
// record to the next: a renderer copies what it keeps.
//
// Values are package program's: integers (program.Int, with size and
// signedness), strings, bytes, stacks (program counters and, for user
// stacks, the process id), symbols (address, kind and process).
// Aggregations are package aggregate's: each entry's key as values and
// its data in the function's slot layout (aggregate/doc.go); Agg.Result
// and Agg.Datum give the value as printed.
package output
