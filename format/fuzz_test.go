package format

import (
	"io"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// FuzzParse checks that no format string panics the parser or the
// printer, whatever values it is given.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"%d", "%-*.*s|%@d\n", "%%", "%k %a %A %Y %T", "%hhd", "%?p", "%3$d", "%lls", "%#08.3llx", "%S %C %ls"} {
		f.Add(s)
	}
	vals := []program.Value{program.I32(-5), program.String("str"), program.Bytes{Data: []byte{1, 2}}, program.Stack{PCs: []uint64{1}}, program.Sym{Addr: 4}, program.Float{V: 1.5}, program.Verbatim("v"), program.U64(7)}
	f.Fuzz(func(t *testing.T, s string) {
		pf, err := Parse(s)
		if err != nil {
			return
		}
		_ = pf.Validate([]ArgType{tInt, tString}, ValidateOptions{Func: "printf", ArgOffset: 1, ExactLen: true})
		p := &Printer{}
		for i := 0; i <= len(vals); i++ {
			args := append(vals[i:], vals[:i]...)
			_ = p.Printf(io.Discard, pf, args)
			_ = p.Printa(io.Discard, pf, args, args[:1])
		}
	})
}
