//go:build linux

package codegen

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

// print(p) records the address and the pointee's bytes, and gives the
// consumer the pointee's type: members with offsets, a union, an array,
// a bit-field, an enum's constants and a pointer.
func TestPrintRecordsObject(t *testing.T) {
	src := `
enum color { RED = 0, GREEN = 5 };
struct inner { int n; char name[4]; };
struct obj {
	int a;
	unsigned int lo : 3, hi : 5;
	enum color c;
	union { char b; long l; } u;
	struct inner in;
	void *p;
};
BEGIN
{
	o = (struct obj *)alloca(sizeof (struct obj));
	o->a = 7;
	o->hi = 9;
	o->c = GREEN;
	o->u.l = 0x1122;
	o->in.name[0] = 'x';
	o->p = (void *)0xfeedface;
	print(o);
}`
	spec := compileD(t, src, Options{})
	var rec *program.Record
	for i, r := range spec.Clauses[0].Records {
		if r.Action == program.ActPrint {
			rec = &spec.Clauses[0].Records[i]
		}
	}
	if rec == nil || rec.Type == nil {
		t.Fatalf("no typed print record in %+v", spec.Clauses[0].Records)
	}
	ty := rec.Type
	if ty.Name != "struct obj" || ty.Kind != program.TStruct || rec.Size != 8+ty.Size || rec.Kind != program.KindBytes {
		t.Fatalf("record %+v of type %q kind %d size %d", rec, ty.Name, ty.Kind, ty.Size)
	}
	fields := map[string]program.Field{}
	for _, f := range ty.Fields {
		fields[f.Name] = f
	}
	hi := fields["hi"]
	if hi.BitSize != 5 || hi.Offset*8+hi.BitOff < 35 {
		t.Errorf("bit-field hi: %+v", hi)
	}
	if f := fields["c"]; f.Type.Name != "enum color" || len(f.Type.Enum) != 2 || f.Type.Enum[1] != (program.EnumConst{Name: "GREEN", Value: 5}) {
		t.Errorf("enum member: %+v", f.Type)
	}
	if f := fields["u"]; !f.Type.Union || f.Offset != 16 || strings.TrimSpace(f.Type.Name) != "union" {
		t.Errorf("union member at %d: %+v", f.Offset, f.Type)
	}
	if f := fields["in"]; f.Type.Fields[1].Type.Kind != program.TArray || !f.Type.Fields[1].Type.Elem.Char || f.Type.Fields[1].Type.Name != "char [4]" {
		t.Errorf("array member: %+v", f.Type.Fields[1].Type)
	}
	if f := fields["p"]; f.Type.Kind != program.TPointer || f.Type.Name != "void *" {
		t.Errorf("pointer member: %+v", f.Type)
	}

	r := loadSpec(t, spec)
	defer r.close()
	recs := r.fire(t)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	data := recs[0][rec.Offset : rec.Offset+rec.Size]
	addr := binary.LittleEndian.Uint64(data)
	obj := data[8:]
	if addr>>48 != 0xffff {
		t.Errorf("address %#x is not a kernel address", addr)
	}
	le := binary.LittleEndian
	if le.Uint32(obj[0:]) != 7 || le.Uint16(obj[hi.Offset:])>>hi.BitOff&31 != 9 || le.Uint32(obj[8:]) != 5 || le.Uint64(obj[16:]) != 0x1122 ||
		obj[fields["in"].Offset+4] != 'x' || le.Uint64(obj[fields["p"].Offset:]) != 0xfeedface {
		t.Errorf("object bytes % x", obj)
	}
}

// print() of a bad address faults as a load through it does.
func TestPrintBadAddressFaults(t *testing.T) {
	got := runD(t, `struct s { int x; }; BEGIN { print((struct s *)8); }`, Options{})
	if want := "fault(clause 0, probe 1, code 1, illval 0x8)\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
