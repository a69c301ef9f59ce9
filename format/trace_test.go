package format

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/program"
)

const traceHeader = "\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n"

// The wants are the record text of actions/trace/tst.*.r after the
// "%32s " probe column.
func TestTrace(t *testing.T) {
	tests := []struct {
		v     program.Value
		quiet bool
		want  string
	}{
		{program.Int{Bits: 0xff, Size: 1, Signed: true}, false, "  -1"},
		{program.Int{Bits: 0xff, Size: 1, Signed: true}, true, "-1"},
		{program.Int{Bits: 0xff, Size: 1}, false, " 255"},
		{program.Int{Bits: 0xffff, Size: 2, Signed: true}, false, "    -1"},
		{program.Int{Bits: 0xffff, Size: 2}, true, "65535"},
		{program.I32(-1), false, "         -1"},
		{program.Int{Bits: 0xffffffff, Size: 4}, false, " 4294967295"},
		{program.I64(-1), false, "                  -1"},
		{program.U64(^uint64(0)), false, " 18446744073709551615"},
		{program.U64(^uint64(0)), true, "18446744073709551615"},
		{program.String("a"), false, "  a                                "},
		{program.String("a"), true, "a"},
		// tst.array.d: trace(curthread->comm)
		{program.Bytes{Data: []byte("dtrace\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")}, false,
			traceHeader + "         0: 64 74 72 61 63 65 00 00 00 00 00 00 00 00 00 00  dtrace..........\n"},
		// tst.struct.d
		{program.Bytes{Data: []byte{0x34, 0x12, 0, 0, 0, 0, 0, 0, 0x76, 0x98, 0, 0}}, false,
			traceHeader + "         0: 34 12 00 00 00 00 00 00 76 98 00 00              4.......v...\n"},
		// tst.struct-1-byte.d
		{program.Bytes{Data: []byte{0x34}}, false,
			traceHeader + "         0: 34                                               4\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := (&Printer{}).Trace(&b, tt.v, tt.quiet); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("Trace(%#v, %v) = %q, want %q", tt.v, tt.quiet, b.String(), tt.want)
		}
	}
}

// tracemem/tst.tracemem.d
func TestTracemem(t *testing.T) {
	banner := []byte("Linux version ")
	var b strings.Builder
	for _, n := range []int{14, 14, 0, 2, 7, 12, 14, 14} {
		if err := Tracemem(&b, banner[:n]); err != nil {
			t.Fatal(err)
		}
	}
	full := traceHeader + "         0: 4c 69 6e 75 78 20 76 65 72 73 69 6f 6e 20        Linux version \n"
	want := full + full +
		traceHeader + "         0: 4c 69                                            Li\n" +
		traceHeader + "         0: 4c 69 6e 75 78 20 76                             Linux v\n" +
		traceHeader + "         0: 4c 69 6e 75 78 20 76 65 72 73 69 6f              Linux versio\n" +
		full + full
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// codegen/tst.str_store_var.d: rawbytes dumps whole string records.
func TestTraceRawString(t *testing.T) {
	var b strings.Builder
	p := &Printer{RawBytes: true, StrSize: 6}
	for _, s := range []program.String{"abcdef", "2"} {
		if err := p.Trace(&b, s, true); err != nil {
			t.Fatal(err)
		}
	}
	want := traceHeader + "         0: 61 62 63 64 65 66 00                             abcdef.\n" +
		traceHeader + "         0: 32 00 00 00 00 00 00                             2......\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestRawBytesRows(t *testing.T) {
	data := make([]byte, 20)
	for i := range data {
		data[i] = byte('A' + i)
	}
	data[19] = 0x80
	want := traceHeader +
		"         0: 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50  ABCDEFGHIJKLMNOP\n" +
		"        10: 51 52 53 80                                      QRS.\n"
	if got := RawBytes(data); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestKey(t *testing.T) {
	p := &Printer{StrSize: 8, Sym: fakeSyms{}}
	tests := []struct {
		v    program.Value
		want string
	}{
		// aggs/tst.signedkeys.r: small keys print as unsigned.
		{program.Int{Bits: 0xfe, Size: 1, Signed: true}, " 254"},
		{program.Int{Bits: 0xfffe, Size: 2, Signed: true}, " 65534"},
		{program.I32(-2), "       -2"},
		{program.I64(-2), "               -2"},
		{program.String("linear"), "  linear                                            "},
		{program.String(""), traceHeader + "         0: 00 00 00 00 00 00 00 00                          ........\n"},
		{program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelSym}, "  vmlinux`ksys_write" + strings.Repeat(" ", 32)},
		{program.Sym{Addr: 0xffffffff82000010, Kind: program.KernelMod}, "  vmlinux" + strings.Repeat(" ", 43)},
		{program.Sym{Addr: 0x401000, PID: 42, Kind: program.UserSym}, "  prog`main" + strings.Repeat(" ", 41)},
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserSym}, "  prog`main" + strings.Repeat(" ", 41)},
		{program.Sym{Addr: 0x401010, PID: 0, Kind: program.UserSym}, "  0x401010" + strings.Repeat(" ", 42)},
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserAddr}, "  prog`main+0x10" + strings.Repeat(" ", 36)},
		{program.Sym{Addr: 0x401010, PID: 42, Kind: program.UserMod}, "  prog" + strings.Repeat(" ", 46)},
		{program.Sym{Addr: 0x9999, PID: 42, Kind: program.UserMod}, "  0x9999" + strings.Repeat(" ", 44)},
	}
	for _, tt := range tests {
		if got := p.Key(tt.v); got != tt.want {
			t.Errorf("Key(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestPrintBytes(t *testing.T) {
	tests := []struct {
		data  []byte
		quiet bool
		want  string
	}{
		{[]byte("abc\x00\x00"), true, "abc"},
		{[]byte("abc"), false, "  abc" + strings.Repeat(" ", 47)},
		{[]byte("ab\x00c"), true, RawBytes([]byte("ab\x00c"))},
		{[]byte("\x00ab"), true, RawBytes([]byte("\x00ab"))},
		{[]byte("tab\there\x00"), true, "tab\there"},
	}
	for _, tt := range tests {
		if got := PrintBytes(tt.data, 50, tt.quiet); got != tt.want {
			t.Errorf("PrintBytes(%q) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

func TestStack(t *testing.T) {
	p := &Printer{Sym: fakeSyms{}}
	st := program.Stack{PCs: []uint64{0xffffffff82000010, 0xffffffff81000000, 0xffffffffc0000040, 0x1234, 0, 0xffffffff82000000}}
	var b strings.Builder
	if err := p.PrintStack(&b, st); err != nil {
		t.Fatal(err)
	}
	ind := strings.Repeat(" ", 14)
	want := "\n" + ind + "vmlinux`ksys_write+0x10\n" + ind + "vmlinux`max_pfn\n" + ind + "ext4`0xffffffffc0000040\n" + ind + "0x1234\n"
	if b.String() != want {
		t.Errorf("stack =\n%q\nwant\n%q", b.String(), want)
	}

	b.Reset()
	us := program.Stack{User: true, PID: 42, PCs: []uint64{0x401020, 0x7f00}}
	if err := (&Printer{Sym: fakeSyms{}, StackIndent: 4}).PrintStack(&b, us); err != nil {
		t.Fatal(err)
	}
	if want := "\n    prog`main+0x20\n    0x7f00\n"; b.String() != want {
		t.Errorf("ustack = %q, want %q", b.String(), want)
	}

	b.Reset()
	(&Printer{}).PrintStack(&b, program.Stack{User: true})
	if b.Len() != 0 {
		t.Errorf("empty ustack printed %q", b.String())
	}

	// %k: a left-aligned width becomes the indentation; a plain width
	// pads each frame and the indentation is 0.
	for _, tt := range []struct{ f, want string }{
		{"%-4k", "\n    0x10\n    0x20\n"},
		{"%6k", "\n  0x10\n  0x20\n"},
	} {
		b.Reset()
		f, _ := Parse(tt.f)
		if err := p.Printf(&b, f, []program.Value{program.Stack{PCs: []uint64{0x10, 0x20}}}); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("%s = %q, want %q", tt.f, b.String(), tt.want)
		}
	}
}
