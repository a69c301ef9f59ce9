// Package aggregate models D aggregations in the consumer: the per-CPU
// value layout the BPF side produces, merging CPUs, clear(), trunc(),
// normalize(), dtrace's sort orders and the printed text (printa() with
// and without a format, the histograms, the output at exit).
//
// It is pure Go; text goes through package format.
//
// # Per-CPU value layout (contract with codegen)
//
// Each aggregation lives in a BPF_MAP_TYPE_PERCPU_HASH map; the value of
// one key on one CPU is an array of Desc.NSlots() little-endian int64
// slots. Every layout starts all-zero: when a key is missing, the
// generated code inserts an all-zero value (BPF_NOEXIST) and then applies
// the update below to this CPU's copy. Desc.Update is the reference
// implementation of every update.
//
//	count       [n]                 n++
//	sum         [s]                 s += v
//	min         [m, n]              if n == 0 || v < m { m = v }; n++
//	max         [m, n]              if n == 0 || v > m { m = v }; n++
//	avg         [n, s]              n++; s += v
//	stddev      [n, s, lo, hi]      n++; s += v; (hi:lo) += |v|*|v|  (128-bit, unsigned)
//	quantize    [127]int64          slot[QuantizeBucket(v)] += incr
//	lquantize   [Levels+2]int64     slot[LquantizeBucket(v, Base, Levels, Step)] += incr
//	llquantize  [2*P+3]int64        slot[LlquantizeBucket(v, Factor, Lmag, Hmag, Steps)] += incr
//	            where P = (Hmag-Lmag+1) * (Steps - Steps/Factor)
//
// min and max carry a count so that the consumer can ignore the zero
// values of CPUs on which the function never fired (a per-CPU hash gives
// every CPU a zeroed copy of a new key). A min or max that never fired
// (after clear()) reports INT64_MAX or INT64_MIN, as dtrace does.
//
// The quantize buckets are dtrace's: bucket 63 counts zero, bucket 63+k
// counts 2^(k-1) <= v < 2^k and 63-k the negative mirror. lquantize has
// an underflow bucket 0 (v < base), Levels linear buckets and an
// overflow bucket. llquantize is ordered from negative overflow (0) to
// positive overflow (2*P+2) with the underflow bucket (|v| < Factor^Lmag)
// in the middle, computed exactly as LlquantizeBucket does.
//
// # Consumer side
//
// To snapshot an aggregation, call Agg.BeginSnapshot, then Agg.Add with
// every key and every CPU's slots. Keys are decoded into program.Value
// tuples; the consumer passes each key value through
// format.Printer.ReduceKey first, which moves sym()/usym() addresses to
// the start of their symbol and mod()/umod() addresses to their module,
// as dtrace does, so that they aggregate per symbol or module.
// With the aggpercpu option set Agg.PerCPU and use Agg.AddCPU instead of
// Add; Printer.CPUs then lists the CPUs whose values print under each
// merged value. clear() is Agg.Clear plus zeroing the kernel's values; trunc() is
// Agg.Trunc plus deleting the returned entries' keys from the kernel map;
// normalize() and denormalize() only change Agg.Normal.
//
// Printer.Printa implements printa() (its output for one aggregation
// without a format starts with an empty line) and marks what it printed;
// Printer.PrintAll prints at exit every aggregation printa() has not
// printed, sorted as dtrace does: by aggregation id, then by value with
// the key breaking ties (or by key with aggsortkey), everything reversed
// by aggsortrev. Keys compare as dtrace compares their bytes: integers
// as unsigned numbers of their size (so -1 sorts after 2), strings
// byte-wise.
package aggregate
