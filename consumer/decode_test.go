package consumer

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/format"
	"github.com/dtrace-go/dtrace/program"
)

// The consumer renders a print() record from codegen's type as dtrace
// does: nested struct, char and short arrays, bit-fields, an enum and a
// pointer; zero members left out.
func TestPrintTypeRendering(t *testing.T) {
	tInt := &program.Type{Kind: program.TInt, Size: 4, Signed: true, Name: "int"}
	tUInt := &program.Type{Kind: program.TInt, Size: 4, Name: "unsigned int"}
	tChar := &program.Type{Kind: program.TInt, Size: 1, Signed: true, Char: true, Name: "char"}
	tShort := &program.Type{Kind: program.TInt, Size: 2, Signed: true, Name: "short"}
	tEnum := &program.Type{Kind: program.TInt, Size: 4, Signed: true, Name: "enum color",
		Enum: []program.EnumConst{{Name: "RED", Value: 0}, {Name: "GREEN", Value: 5}}}
	tVoidp := &program.Type{Kind: program.TPointer, Size: 8, Name: "void *", Elem: &program.Type{Kind: program.TVoid, Name: "void"}}
	tDouble := &program.Type{Kind: program.TInt, Size: 8, Float: true, Name: "double"}
	inner := &program.Type{Kind: program.TStruct, Size: 8, Name: "struct ", Fields: []program.Field{
		{Name: "name", Offset: 0, Type: &program.Type{Kind: program.TArray, Size: 4, Len: 4, Elem: tChar, Name: "char [4]"}},
		{Name: "vals", Offset: 4, Type: &program.Type{Kind: program.TArray, Size: 4, Len: 2, Elem: tShort, Name: "short [2]"}},
	}}
	outer := &program.Type{Kind: program.TStruct, Size: 48, Name: "struct outer", Fields: []program.Field{
		{Name: "a", Offset: 0, Type: tInt},
		{Name: "flag", Offset: 4, Type: tUInt, BitSize: 1},
		{Name: "mode", Offset: 4, BitOff: 1, Type: tUInt, BitSize: 3},
		{Name: "c", Offset: 8, Type: tEnum},
		{Name: "in", Offset: 12, Type: inner},
		{Name: "p", Offset: 24, Type: tVoidp},
		{Name: "zero", Offset: 32, Type: tInt},
		{Name: "d", Offset: 40, Type: tDouble},
	}}
	le := binary.LittleEndian
	data := make([]byte, 48)
	le.PutUint32(data[0:], uint32(0xfffffffe))
	data[4] = 1 | 5<<1
	le.PutUint32(data[8:], 5)
	copy(data[12:], "ab")
	le.PutUint16(data[18:], 3)
	le.PutUint64(data[24:], 0xfeedface)
	le.PutUint64(data[40:], 0x4000000000000000)

	lines := []struct {
		depth int
		text  string
	}{
		{0, "(struct outer) {"},
		{1, ".a = (int)-2,"},
		{1, ".flag = (unsigned int)1,"},
		{1, ".mode = (unsigned int)5,"},
		{1, ".c = (enum color)GREEN,"},
		{1, ".in = (struct) {"},
		{2, ".name = (char [4]) ["},
		{3, "(char)'a',"},
		{3, "(char)'b',"},
		{2, "],"},
		{2, ".vals = (short [2]) ["},
		{3, "(short)3,"},
		{2, "],"},
		{1, "},"},
		{1, ".p = (void *)0xfeedface,"},
		{0, "}"},
	}
	want := "0xffff888000001000 = *\n"
	for _, l := range lines {
		want += strings.Repeat(" ", 44+l.depth) + l.text + "\n"
	}
	var b strings.Builder
	if err := (&format.Printer{}).PrintType(&b, 0xffff888000001000, printTypeInfo(outer, 0), data, 0); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
