package types

import "testing"

func TestTypeString(t *testing.T) {
	foo := &Struct{Tag: "foo", Complete: true}
	tests := []struct {
		t    Type
		want string
	}{
		{Int, "int"},
		{NewPointer(Char), "char *"},
		{NewPointer(NewPointer(Char)), "char **"},
		{&Array{Elem: Int, Len: 10}, "int [10]"},
		{NewPointer(&Array{Elem: Int, Len: 10}), "int (*)[10]"},
		{&Array{Elem: NewPointer(Char), Len: 4}, "char *[4]"},
		{NewPointer(&Func{Result: Int, Params: []Type{Int, NewPointer(Char)}}), "int (*)(int, char *)"},
		{NewPointer(&Qualified{Quals: Const, Type: Char}), "const char *"},
		{foo, "struct foo"},
		{NewPointer(foo), "struct foo *"},
		{&Struct{Union: true, Tag: "u", Forward: true}, "struct u"},
		{&Struct{Union: true, Tag: "u"}, "union u"},
		{&Enum{Tag: "e"}, "enum e"},
		{Uint64, "uint64_t"},
		{&String{Bytes: 256}, "string"},
		{Stack, "stack"},
	}
	for _, tt := range tests {
		if got := TypeString(tt.t); got != tt.want {
			t.Errorf("TypeString = %q, want %q", got, tt.want)
		}
	}
}

func TestStructLayout(t *testing.T) {
	// dtrace's container places every member on a byte boundary aligned
	// for its type, bit-fields included, and does not pad the end
	// (bitfields/tst.SizeofBitField.d).
	type field struct {
		t    *Basic
		bits int
	}
	tests := []struct {
		fields []field
		size   int64
	}{
		{[]field{{Int, 1}}, 1},
		{[]field{{Int, 1}, {Int, 3}}, 2},
		{[]field{{Int, 12}, {Int, 10}, {Int, 3}}, 5},
		{[]field{{Long, 32}, {LongLong, 9}, {Int, 1}}, 7},
		{[]field{{Char, 2}, {Short, 12}, {Long, 32}}, 8},
		{[]field{{Int, 30}, {Int, 30}, {Int, 32}}, 12},
		{[]field{{Char, 0}, {Int, 0}}, 8},
	}
	for i, tt := range tests {
		s := &Struct{Tag: "s"}
		for j, f := range tt.fields {
			var ft Type = f.t
			if f.bits > 0 {
				ft = BitField(f.t, f.bits)
			}
			if !s.AddField(string(rune('a'+j)), ft, f.bits) {
				t.Fatalf("case %d: duplicate field", i)
			}
		}
		if s.Size() != tt.size {
			t.Errorf("case %d: size %d, want %d", i, s.Size(), tt.size)
		}
	}
	s := &Struct{Tag: "s"}
	s.AddField("a", Char, 0)
	if s.AddField("a", Int, 0) {
		t.Error("AddField accepted a duplicate name")
	}
	if _, off, _ := s.Field("a"); off != 0 {
		t.Errorf("offset of a = %d", off)
	}
}

func TestArith(t *testing.T) {
	tests := []struct {
		a, b, want Type
	}{
		{Char, Char, Char},
		{Short, UnsignedShort, UnsignedShort},
		{UnsignedChar, Char, UnsignedChar},
		{Char, Short, Short},
		{Int, UnsignedInt, UnsignedInt},
		{Int, Long, Long},
		{UnsignedInt, Long, Long},
		{Long, UnsignedLong, UnsignedLong},
		{Uint64, Int, Uint64},
		{&Enum{Tag: "e"}, Char, Int},
	}
	for _, tt := range tests {
		if got := ArithResult(tt.a, tt.b); got != tt.want {
			t.Errorf("ArithResult(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestIdentical(t *testing.T) {
	s1 := &Struct{Tag: "a", Complete: true}
	s2 := &Struct{Tag: "a", Complete: true}
	tests := []struct {
		a, b Type
		want bool
	}{
		{Int, Int32, true},
		{Int, UnsignedInt, false},
		{NewPointer(Char), NewPointer(&Qualified{Quals: Const, Type: Char}), true},
		{s1, s1, true},
		{s1, s2, false},
		{&Struct{Tag: "a"}, s1, true}, // a forward reference and its definition
		{&Array{Elem: Int, Len: 2}, &Array{Elem: Int, Len: 3}, false},
		{&String{Bytes: 10}, &String{Bytes: 20}, true},
	}
	for _, tt := range tests {
		if got := Identical(tt.a, tt.b); got != tt.want {
			t.Errorf("Identical(%v, %v) = %v", tt.a, tt.b, got)
		}
	}
}

func TestScopes(t *testing.T) {
	c, d := CScope(), DScope(128)
	if c.Lookup("unsigned long long") != UnsignedLongLong || c.Lookup("signed") != Int {
		t.Error("C scope lacks intrinsic names")
	}
	if s, ok := d.Lookup("string").(*String); !ok || s.Size() != 128 {
		t.Errorf("string = %v", d.Lookup("string"))
	}
	if d.Lookup("uint64_t") != Uint64 || Uint64.Size() != 8 || IsSigned(Uint64) {
		t.Error("uint64_t wrong")
	}
	if len(d.Names()) == 0 || d.Lookup("nonesuch") != nil {
		t.Error("Names/Lookup wrong")
	}
}

func TestModuleOf(t *testing.T) {
	for _, tt := range []struct {
		t    Type
		want string
	}{
		{&Struct{Tag: "task_struct", Module: "vmlinux"}, "vmlinux"},
		{&Enum{Tag: "e", Module: "D"}, "D"},
		{&Typedef{Name: "size_t", Module: "C", Type: Int}, "C"},
		{&Pointer{Elem: &Struct{Module: "vmlinux"}}, ""},
		{Int, ""},
	} {
		if got := ModuleOf(tt.t); got != tt.want {
			t.Errorf("ModuleOf(%v) = %q, want %q", tt.t, got, tt.want)
		}
	}
}
