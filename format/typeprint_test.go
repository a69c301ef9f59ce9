package format

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// testStruct is print/tst.print.local.d's struct test_struct.
func testStruct() *TypeInfo {
	tInt := &TypeInfo{Kind: TypeInt, Name: "int", Size: 4, Signed: true}
	tChar := &TypeInfo{Kind: TypeInt, Name: "char", Size: 1, Signed: true, Char: true}
	tU8 := &TypeInfo{Kind: TypeInt, Name: "__u8", Size: 1}
	tU64 := &TypeInfo{Kind: TypeInt, Name: "__u64", Size: 8}
	tUint64 := &TypeInfo{Kind: TypeInt, Name: "uint64_t", Size: 8}
	tVoidp := &TypeInfo{Kind: TypePointer, Name: "void *", Size: 8}
	tBool := &TypeInfo{Kind: TypeInt, Name: "bool", Size: 1}
	tEnum := &TypeInfo{Kind: TypeEnum, Name: "enum eh", Size: 4,
		Enum: []EnumConst{{"FIRSTVAL", 0}, {"SECONDVAL", 1}, {"THIRDVAL", 3}}}
	return &TypeInfo{Kind: TypeStruct, Name: "struct test_struct", Size: 48, Members: []Member{
		{"a", 0, tInt},
		{"b", 32, &TypeInfo{Kind: TypeArray, Name: "char [5]", Size: 5, Elem: tChar, Len: 5}},
		{"u", 128, &TypeInfo{Kind: TypeUnion, Name: "union ", Size: 8, Members: []Member{{"c", 0, tU8}, {"d", 0, tU64}}}},
		{"s", 192, &TypeInfo{Kind: TypeStruct, Name: "struct ", Size: 16, Members: []Member{{"e", 0, tVoidp}, {"f", 64, tUint64}}}},
		{"g", 320, tBool},
		{"h", 352, tEnum},
	}}
}

func testData(d, e, f uint64, h uint32) []byte {
	b := make([]byte, 48)
	binary.LittleEndian.PutUint32(b[0:], 1)
	copy(b[4:], "test\x00")
	binary.LittleEndian.PutUint64(b[16:], d)
	binary.LittleEndian.PutUint64(b[24:], e)
	binary.LittleEndian.PutUint64(b[32:], f)
	b[40] = 1
	binary.LittleEndian.PutUint32(b[44:], h)
	return b
}

func indentLines(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		n := 0
		for n < len(l) && l[n] == '|' {
			n++
		}
		b.WriteString(strings.Repeat(" ", 44+n) + l[n:] + "\n")
	}
	return b.String()
}

// testStructHead is how every printing of testStruct begins: its first
// two members (the lines as indentLines takes them).
var testStructHead = []string{
	"(struct test_struct) {",
	"|.a = (int)1,",
	"|.b = (char [5]) [",
	"||(char)'t',",
	"||(char)'e',",
	"||(char)'s',",
	"||(char)'t',",
	"|],",
}

// print/tst.print.local.r (the corpus shows addresses as {ptr}).
func TestPrintType(t *testing.T) {
	var b strings.Builder
	p := &Printer{}
	data := testData(123456789, 0xffff9b7aca7e0000, 987654321, 1)
	if err := p.PrintType(&b, 0xffff888012345678, testStruct(), data, 0); err != nil {
		t.Fatal(err)
	}
	want := "0xffff888012345678 = *\n" + indentLines(append(testStructHead,
		"|.u = (union) {",
		"||.c = (__u8)21,",
		"||.d = (__u64)123456789,",
		"|},",
		"|.s = (struct) {",
		"||.e = (void *)0xffff9b7aca7e0000,",
		"||.f = (uint64_t)987654321,",
		"|},",
		"|.g = (bool)1,",
		"|.h = (enum eh)SECONDVAL,",
		"}",
	)...)
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// print/tst.print.local.trunc.r: printsize 8, then 24.
func TestPrintTypeTruncated(t *testing.T) {
	data := testData(12345678, 0xfeedfacefeedface, 100, 1)
	tests := []struct {
		size int
		want string
	}{
		{8, indentLines(append(testStructHead, "|...", "}")...)},
		{24, indentLines(append(testStructHead, "|.u = (union) {", "||.c = (__u8)78,", "||.d = (__u64)12345678,", "|...", "|},", "}")...)},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := (&Printer{}).PrintType(&b, 0x1000, testStruct(), data, tt.size); err != nil {
			t.Fatal(err)
		}
		want := "0x1000 = *\n" + tt.want
		if b.String() != want {
			t.Errorf("printsize %d: got\n%s\nwant\n%s", tt.size, b.String(), want)
		}
	}
}

func TestPrintTypeScalarAndEmpty(t *testing.T) {
	var b strings.Builder
	empty := &TypeInfo{Kind: TypeStruct, Name: "struct foo", Size: 4, Members: []Member{{"x", 0, &TypeInfo{Kind: TypeInt, Name: "int", Size: 4, Signed: true}}}}
	if err := (&Printer{}).PrintType(&b, 0x10, empty, make([]byte, 4), 0); err != nil {
		t.Fatal(err)
	}
	want := "0x10 = *\n" + indentLines("(struct foo) {", "}")
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// print/tst.print.local.zeroed.d
func TestPrintTypeZeroed(t *testing.T) {
	st := testStruct()
	st.Members[5].Type.Enum = []EnumConst{{"FIRSTVAL", 1}, {"SECONDVAL", 2}, {"THIRDVAL", 3}}
	data := make([]byte, 48)
	copy(data[4:], "\x00est\x00")
	data[40] = 1
	data[44] = 1
	var b strings.Builder
	if err := (&Printer{}).PrintType(&b, 0x10, st, data, 0); err != nil {
		t.Fatal(err)
	}
	want := "0x10 = *\n" + indentLines("(struct test_struct) {", "|.b = (char [5]) [", "|],", "|.g = (bool)1,", "|.h = (enum eh)FIRSTVAL,", "}")
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// print/tst.print.local.trunc2.d: eight nested structs under shrinking
// printsize values, compared with the corpus.
func TestPrintTypeNested(t *testing.T) {
	want, err := os.ReadFile("../../shared/conformance/dtrace-utils/test/unittest/print/tst.print.local.trunc2.r")
	if err != nil {
		t.Skipf("conformance corpus not available: %v", err)
	}
	ll := &TypeInfo{Kind: TypeInt, Name: "long long", Size: 8, Signed: true}
	var typ *TypeInfo
	for depth := 7; depth >= 0; depth-- {
		name := "struct "
		if depth == 0 {
			name = "struct test_struct"
		}
		members := []Member{{"x", 0, ll}}
		if typ != nil {
			members = append(members, Member{string(rune('a' + depth)), 64, typ})
		}
		typ = &TypeInfo{Kind: TypeStruct, Name: name, Size: 8 * (8 - depth), Members: members}
	}
	data := make([]byte, 64)
	for i := 0; i < 8; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], uint64(1111111111111111*(i+1)))
	}
	var b strings.Builder
	p := &Printer{}
	for _, size := range []int{90, 64, 56, 48, 40, 32} {
		if err := p.PrintType(&b, 0x1000, typ, data, size); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.ReplaceAll(b.String(), "0x1000", "{ptr}") + "\n"
	if got != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
