// Package format turns decoded trace data into the exact text of
// dtrace(1M) (Oracle's DTrace for Linux, which the conformance corpus
// records): printf()/printa() formats, trace() and tracemem() records,
// stacks, symbols, aggregation keys and the print() action.
//
// It is pure Go and does no I/O besides writing to the given io.Writer.
//
// # Contracts
//
// The checker calls Parse at compile time for every printf-like format
// string; a parse error is an *Error tagged D_SYNTAX. It then calls
// (*Format).Validate with the D types of the arguments (ArgType) to get
// dtrace's D_PRINTF_* errors, messages included (no trailing newline).
// For printa the arguments are the aggregation's key types, with
// ValidateOptions.Aggregation set and AggResult set to Uint64Type for
// count() (the default is int64_t).
//
// The consumer decodes each record item into a program.Value (the
// values live in package program, below this package and the renderers,
// because embedders receive them too):
//
//   - integers: Int with their byte size and signedness (enums as int);
//   - D strings: String (cut at NUL);
//   - structs, unions, arrays, tracemem data: Bytes;
//   - stack(), ustack(): Stack (ustack carries the pid);
//   - sym(), func(), mod(), usym(), ufunc(), umod(), uaddr(): Sym;
//   - floats: Float.
//
// and calls Printer.Printf with the values of a printf() in argument
// order (dynamic widths and precisions in their places), Printer.Trace
// for trace(), Tracemem for tracemem() (after cutting the data to the
// dynamic size), Printer.PrintStack for stack()/ustack() records,
// Printer.PrintType for print(). The caller writes the probe column
// ("%3d %6d %32s " or, with _DTRACE_TESTING, "%32s ") and the newline
// that ends each record when not quiet.
//
// Aggregation keys print with Printer.Key outside formats; before a key
// is merged the consumer passes its values through Printer.ReduceKey
// (sym/usym to the symbol start, mod/umod to the module start when the
// Symbolizer also implements ModuleBaser). The aggregate package uses
// Printer.Printa for printa() formats and passes histograms as
// program.Verbatim values, which any conversion prints unchanged.
//
// Symbols: a Sym prints outside formats (trace(), keys) as "  %-50s" of
// SymString: sym()/func() and usym()/ufunc() without offset, uaddr() with
// it, mod()/umod() as the module's base name; unknown addresses in hex.
// With the rawbytes option Trace dumps every value in hex, strings as
// their whole strsize+1 byte record.
//
// A printf conversion follows the value rather than the D type where
// dtrace's record action would: %d of an unsigned value prints unsigned,
// values narrower than 8 bytes are sign- or zero-extended and printed as
// C ints, mod()/umod() values print their module under any conversion.
// A precision of 0 is ignored, as dtrace drops it ("%.0s" prints the
// whole string). Thousands grouping (') prints nothing extra, as in the
// C locale.
package format
