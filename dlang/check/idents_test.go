package check

import (
	"slices"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// dtOpenIdents are the identifiers dtrace's lexer knows (dt_open.c, the
// version the corpus follows): the list the parser kept before it took
// them from this package.
var dtOpenIdents = []string{
	"NULL", "alloca", "arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8", "arg9",
	"args", "avg", "basename", "bcopy", "breakpoint", "caller", "chill", "cleanpath", "clear",
	"commit", "copyin", "copyinstr", "copyinto", "copyout", "copyoutstr", "count", "curcpu",
	"curthread", "d_path", "ddi_pathname", "denormalize", "dirname", "discard", "epid", "errno",
	"execname", "exit", "freopen", "ftruncate", "func", "getmajor", "getminor", "gid", "htonl",
	"htonll", "htons", "id", "index", "inet_ntoa", "inet_ntoa6", "inet_ntop", "ipl", "jstack",
	"link_ntop", "llquantize", "lltostr", "lquantize", "max", "min", "mod", "msgdsize", "msgsize",
	"mutex_owned", "mutex_owner", "mutex_type_adaptive", "mutex_type_spin", "normalize", "ntohl",
	"ntohll", "ntohs", "pcap", "pid", "ppid", "print", "printa", "printf", "probefunc", "probemod",
	"probename", "probeprov", "progenyof", "quantize", "raise", "rand", "rindex", "rw_iswriter",
	"rw_read_held", "rw_write_held", "self", "setopt", "speculate", "speculation", "stack",
	"stackdepth", "stddev", "stop", "strchr", "strjoin", "strlen", "strrchr", "strstr", "strtok",
	"substr", "sum", "sym", "system", "this", "tid", "timestamp", "trace", "tracemem", "trunc",
	"uaddr", "ucaller", "ufunc", "uid", "umod", "uregs", "ustack", "ustackdepth", "usym",
	"vtimestamp", "walltimestamp",
}

// TestPredefinedIdents pins IsPredefinedIdent to dtrace's list: a table
// row added without unlexed changes which syntax errors quote what.
func TestPredefinedIdents(t *testing.T) {
	var got []string
	for name := range lexedIdents() {
		got = append(got, name)
	}
	slices.Sort(got)
	want := slices.Clone(dtOpenIdents)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Errorf("%s is predefined but not in dtrace's list: mark its row unlexed", n)
			}
		}
		for _, n := range want {
			if !slices.Contains(got, n) {
				t.Errorf("%s is in dtrace's list but not predefined", n)
			}
		}
	}
	// The parser quotes as dtrace does once it is told the names.
	cfg := &syntax.Config{IsIdent: IsPredefinedIdent}
	_, err := cfg.Parse(syntax.NewFileSet(), "t.d", []byte("BEGIN { x = (y)timestamp }"))
	if err == nil || err.Error() != `line 1: syntax error near "timestamp"` {
		t.Errorf("syntax error %v, want the one near \"timestamp\"", err)
	}
}

// TestAggFuncNames pins the aggregating functions of the table to the
// compiled program's (program.AggFunc), whose names package aggregate
// prints: the same names, no more, no fewer.
func TestAggFuncNames(t *testing.T) {
	var table []string
	for _, f := range funcTable {
		if f.Kind == AggFunc {
			table = append(table, f.Name)
		}
	}
	var prog []string
	for f := program.AggCount; f <= program.AggLlquantize; f++ {
		prog = append(prog, f.String())
	}
	slices.Sort(table)
	slices.Sort(prog)
	if !slices.Equal(table, prog) {
		t.Errorf("aggregating functions: table %v, program %v", table, prog)
	}
}
