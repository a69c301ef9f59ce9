package codegen

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// sampleProgram builds BEGIN { printf("%d %s %c", arg0, "str", (char)arg1); }
// plus an aggregation and an ERROR clause.
func sampleProgram(ti *tinfo) *syntax.Program {
	args := argVars()
	pf := ti.call("printf", program.TypeVoid, ti.str("%d %s %c"), ti.variable(args[0]), ti.str("str"), ti.cast(program.TypeChar, ti.variable(args[1])))
	ag := ti.agg(&AggInfo{ID: 0, Name: "q", Func: "quantize", Keys: []*program.Type{program.TypeLong}}, ti.variable(args[2]))
	upd := ti.assign(syntax.ASSIGN, ag, ti.call("quantize", program.TypeVoid, ti.variable(args[0])))
	return progOf(
		ti.clause("BEGIN", nil, ti.stmt(pf), ti.stmt(upd)),
		ti.clause("ERROR", nil, ti.stmt(ti.call("trace", program.TypeVoid, ti.variable(args[1])))),
	)
}

func TestDeterministic(t *testing.T) {
	var out []string
	for i := 0; i < 2; i++ {
		ti := newInfo()
		spec, err := GenerateProgram(sampleProgram(ti), ti, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v %+v %+v", spec.Clauses[0].Insns, spec.Maps, spec.Clauses[0].Records))
	}
	if out[0] != out[1] {
		t.Error("two generations of the same program differ")
	}
}

func TestRecordLayout(t *testing.T) {
	ti := newInfo()
	spec, err := GenerateProgram(sampleProgram(ti), ti, Options{StrSize: 32})
	if err != nil {
		t.Fatal(err)
	}
	c := spec.Clauses[0]
	want := []program.Record{
		{Action: program.ActPrintf, Offset: 16, FormatID: 0, AggID: -1, NArgs: 3},
		{Action: program.ActArg, Offset: 16, Size: 8, Kind: program.KindSigned, FormatID: -1, AggID: -1},
		{Action: program.ActArg, Offset: 24, Size: 40, Kind: program.KindString, FormatID: -1, AggID: -1},
		{Action: program.ActArg, Offset: 64, Size: 1, Kind: program.KindSigned, FormatID: -1, AggID: -1},
	}
	if fmt.Sprint(c.Records) != fmt.Sprint(want) {
		t.Errorf("records\n got %+v\nwant %+v", c.Records, want)
	}
	if c.RecordSize != 72 || len(c.Segments) != 1 || c.EPID != 1 {
		t.Errorf("size %d, %d segments, EPID %d", c.RecordSize, len(c.Segments), c.EPID)
	}
	if spec.Formats[0] != "%d %s %c" {
		t.Errorf("format %q", spec.Formats[0])
	}
	a := spec.Aggs[0]
	if a.Map != "dt_agg_0" || a.KeySize != 8 || a.ValueSize != 127*8 {
		t.Errorf("aggregation %+v", a)
	}
	if !spec.Clauses[1].IsError || len(spec.Funcs) != 2 || spec.Funcs[0][0].Symbol() != "dt_error" ||
		spec.Funcs[1][0].Symbol() != "dt_error_clause_1" {
		t.Errorf("ERROR clause not wired to dt_error")
	}
	for _, c := range spec.Clauses {
		if c.Insns[0].Symbol() != c.Symbol || c.Insns[0].Source() == nil {
			t.Errorf("%s: first instruction lacks its symbol or source", c.Symbol)
		}
	}
}

func TestUnsupportedHasPosition(t *testing.T) {
	ti := newInfo()
	call := ti.call("mutex_owned", program.TypeInt, ti.str("abc"))
	_, err := GenerateProgram(progOf(ti.clause("BEGIN", nil, ti.stmt(call))), ti, Options{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Pos != call.Pos() {
		t.Fatalf("error %v does not carry the call's position", err)
	}
}
