package format

import (
	"strings"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/program"
)

// The expected strings of TestConversions come from glibc's printf with
// the C format dtrace builds for each conversion.
func TestConversions(t *testing.T) {
	tests := []struct {
		format string
		v      program.Value
		want   string
	}{
		{"%d", program.I32(-17), "-17"},
		{"%5d", program.I32(42), "   42"},
		{"%-5d|", program.I32(42), "42   |"},
		{"%05d", program.I32(-42), "-0042"},
		{"%+d", program.I32(42), "+42"},
		{"% d", program.I32(42), " 42"},
		{"%.3d", program.I32(7), "007"},
		{"%08.3d", program.I32(7), "     007"},
		{"%x", program.Int{Bits: 3735928559, Size: 4}, "deadbeef"},
		{"%X", program.Int{Bits: 3735928559, Size: 4}, "DEADBEEF"},
		{"%#x", program.Int{Bits: 255, Size: 4}, "0xff"},
		{"%#x", program.Int{Bits: 0, Size: 4}, "0"},
		{"%#o", program.Int{Bits: 8, Size: 4}, "010"},
		{"%#o", program.Int{Bits: 0, Size: 4}, "0"},
		{"%o", program.I32(-1), "37777777777"},
		{"%u", program.I32(-1), "4294967295"},
		{"%x", program.I64(-1), "ffffffffffffffff"},
		{"%d", program.I64(-9223372036854775808), "-9223372036854775808"},
		{"%d", program.U64(18446744073709551615), "18446744073709551615"},
		{"%d", program.Int{Bits: 4294967295, Size: 4}, "4294967295"},
		{"%d", program.Int{Bits: 255, Size: 1, Signed: true}, "-1"},
		{"%d", program.Int{Bits: 65535, Size: 2}, "65535"},
		{"%x", program.Int{Bits: 255, Size: 1, Signed: true}, "ff"},
		{"%c", program.I32(97), "a"},
		{"%3c|", program.I32(97), "  a|"},
		{"%-3c|", program.I32(97), "a  |"},
		{"%s", program.String("hello"), "hello"},
		{"%10s|", program.String("hello"), "     hello|"},
		{"%-10s|", program.String("hello"), "hello     |"},
		{"%.2s|", program.String("hello"), "he|"},
		{"%010s|", program.String("hello"), "     hello|"},
		{"%+u", program.Int{Bits: 5, Size: 4}, "5"},
		{"%p", program.U64(0x12345678), "12345678"},
		{"%#8x", program.Int{Bits: 0x123, Size: 4}, "   0x123"},
		{"%e", program.Float{V: 1234.5, Size: 8}, "1.234500e+03"},
		{"%E", program.Float{V: 1234.5, Size: 8}, "1.234500E+03"},
		{"%f", program.Float{V: 3.14159, Size: 8}, "3.141590"},
		{"%10.3f|", program.Float{V: 3.14159, Size: 8}, "     3.142|"},
		{"%-10.2e|", program.Float{V: -2.5, Size: 8}, "-2.50e+00 |"},
		{"%g", program.Float{V: 0.0001234, Size: 8}, "0.0001234"},
		{"%g", program.Float{V: 100000, Size: 8}, "100000"},
		{"%g", program.Float{V: 1000000, Size: 8}, "1e+06"},
		{"%g", program.Float{V: 123456789, Size: 8}, "1.23457e+08"},
		{"%G", program.Float{V: 1e-10, Size: 8}, "1E-10"},
		{"%#g", program.Float{V: 1.5, Size: 8}, "1.50000"},
		{"%.3g", program.Float{V: 1234, Size: 8}, "1.23e+03"},
		{"%08.2f", program.Float{V: -3.5, Size: 8}, "-0003.50"},
		{"%+f", program.Float{V: 2, Size: 8}, "+2.000000"},
		{"% e", program.Float{V: 2, Size: 8}, " 2.000000e+00"},
		{"%g", program.Float{V: 0, Size: 8}, "0"},
		{"%.0e", program.Float{V: 12345, Size: 8}, "1.234500e+04"}, // dtrace drops a zero precision
		{"%S", program.String("a\tb\"\x01"), `a\tb\"\001`},
		{"%C", program.I32('\n'), `\n`},
		{"%@d", program.Verbatim("\n  histogram\n"), "\n  histogram\n"},
		{"%a", program.U64(0xffff0010), "0xffff0010"},
		{"%ls", program.Bytes{Data: []byte{'h', 0, 0, 0, 'i', 0, 0, 0, 0, 0, 0, 0}}, "hi"},
		{"%s", program.Bytes{Data: []byte("dtrace\x00\x00junk")}, "dtrace"},
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.format, err)
		}
		var b strings.Builder
		p := &Printer{}
		if err := p.Printa(&b, f, []program.Value{tt.v}, []program.Value{tt.v}); err != nil {
			t.Errorf("%q of %#v: %v", tt.format, tt.v, err)
			continue
		}
		if b.String() != tt.want {
			t.Errorf("%q of %#v = %q, want %q", tt.format, tt.v, b.String(), tt.want)
		}
	}
}

func printfAll(t *testing.T, p *Printer, calls []printfCall) string {
	t.Helper()
	var b strings.Builder
	for _, c := range calls {
		f, err := Parse(c.format)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.format, err)
		}
		if err := p.Printf(&b, f, c.args); err != nil {
			t.Fatalf("Printf(%q): %v", c.format, err)
		}
	}
	return b.String()
}

type printfCall struct {
	format string
	args   []program.Value
}

// fakeSyms knows a few kernel and user symbols.
type fakeSyms struct{}

func (fakeSyms) KernelSym(addr uint64) (string, string, uint64, bool) {
	switch {
	case addr >= 0xffffffff81000000 && addr < 0xffffffff81000100:
		return "vmlinux", "max_pfn", addr - 0xffffffff81000000, true
	case addr >= 0xffffffff82000000 && addr < 0xffffffff82000100:
		return "vmlinux", "ksys_write", addr - 0xffffffff82000000, true
	case addr >= 0xffffffffc0000000 && addr < 0xffffffffc0001000:
		return "ext4", "", 0, true
	}
	return "", "", 0, false
}

func (fakeSyms) UserSym(pid int, addr uint64) (string, string, uint64, bool) {
	if pid == 42 && addr >= 0x401000 && addr < 0x402000 {
		return "/usr/bin/prog", "main", addr - 0x401000, true
	}
	return "", "", 0, false
}

// printf/tst.basics.d
func TestPrintfBasics(t *testing.T) {
	i := program.I32('a')
	short := program.Int{Bits: 97, Size: 2, Signed: true}
	ushort := program.Int{Bits: 97, Size: 2}
	long := program.I64(97)
	ulong := program.U64(97)
	uint := program.Int{Bits: 97, Size: 4}
	got := printfAll(t, &Printer{Sym: fakeSyms{}}, []printfCall{
		{"\n", nil},
		{"%%a = %a\n", []program.Value{program.U64(0xffffffff81000000)}},
		{"%%c = %c\n", []program.Value{i}},
		{"%%d = %d\n", []program.Value{i}},
		{"%%hd = %hd\n", []program.Value{short}},
		{"%%hi = %hi\n", []program.Value{short}},
		{"%%ho = %ho\n", []program.Value{ushort}},
		{"%%hu = %hu\n", []program.Value{ushort}},
		{"%%hx = %hx\n", []program.Value{ushort}},
		{"%%hX = %hX\n", []program.Value{ushort}},
		{"%%i = %i\n", []program.Value{i}},
		{"%%lc = %lc\n", []program.Value{i}},
		{"%%ld = %ld\n", []program.Value{long}},
		{"%%li = %li\n", []program.Value{long}},
		{"%%lo = %lo\n", []program.Value{ulong}},
		{"%%lu = %lu\n", []program.Value{ulong}},
		{"%%lx = %lx\n", []program.Value{ulong}},
		{"%%lX = %lX\n", []program.Value{ulong}},
		{"%%o = %o\n", []program.Value{uint}},
		{"%%p = %p\n", []program.Value{program.U64(97)}},
		{"%%s = %s\n", []program.Value{program.String("hello")}},
		{"%%u = %u\n", []program.Value{uint}},
		{"%%x = %x\n", []program.Value{uint}},
		{"%%X = %X\n", []program.Value{uint}},
	})
	want := "\n%a = vmlinux`max_pfn\n%c = a\n%d = 97\n%hd = 97\n%hi = 97\n%ho = 141\n%hu = 97\n%hx = 61\n%hX = 61\n%i = 97\n%lc = a\n%ld = 97\n%li = 97\n%lo = 141\n%lu = 97\n%lx = 61\n%lX = 61\n%o = 141\n%p = 61\n%s = hello\n%u = 97\n%x = 61\n%X = 61\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// printf/tst.flags.d (before the corpus turns 0x123 into {ptr}).
func TestPrintfFlags(t *testing.T) {
	got := printfAll(t, &Printer{}, []printfCall{
		{"\n", nil},
		{"# %#8x\n", []program.Value{program.I32(0x123)}},
		{"0 %08x\n", []program.Value{program.I32(0x123)}},
		{"- %-8x\n", []program.Value{program.I32(0x123)}},
		{"+ %+8d\n", []program.Value{program.I32(123)}},
		{"  % 8d\n", []program.Value{program.I32(123)}},
	})
	want := "\n#    0x123\n0 00000123\n- 123     \n+     +123\n       123\n"
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

// printf/tst.wp.d
func TestPrintfWidthPrecision(t *testing.T) {
	calls := []printfCall{{"\n", nil}}
	for i := 0; i <= 9; i++ {
		calls = append(calls, printfCall{"%" + itoa(i) + "." + itoa(i) + "s\n", []program.Value{program.String("hello")}})
	}
	// printf("%*.*s\n", x, x++, "hello"): arguments are evaluated left to
	// right, so width and precision are equal.
	for x := 0; x <= 9; x++ {
		calls = append(calls, printfCall{"%*.*s\n", []program.Value{program.I32(int32(x)), program.I32(int32(x)), program.String("hello")}})
	}
	got := printfAll(t, &Printer{}, calls)
	want := "\nhello\nh\nhe\nhel\nhell\nhello\n hello\n  hello\n   hello\n    hello\n" +
		"hello\nh\nhe\nhel\nhell\nhello\n hello\n  hello\n   hello\n    hello\n"
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

// TestPrintfWide: widths and precisions of ten million, which dtrace
// prints (printf/tst.wide), and the 64 MiB bound beyond which a field is
// not widened.
func TestPrintfWide(t *testing.T) {
	got := printfAll(t, &Printer{}, []printfCall{
		{"%10000000d\n", []program.Value{program.I32(1)}},
		{"%.10000000d\n", []program.Value{program.I32(1)}},
		{"%2000000000d\n", []program.Value{program.I32(1)}},
	})
	lines := strings.Split(got, "\n")
	want := []string{strings.Repeat(" ", 9999999) + "1", strings.Repeat("0", 9999999) + "1"}
	if len(lines) != 4 || lines[0] != want[0] || lines[1] != want[1] || len(lines[2]) != maxField {
		t.Errorf("line lengths %d, %d, %d; want 10000000, 10000000, %d", len(lines[0]), len(lines[1]), len(lines[2]), maxField)
	}
}

// printf/tst.ints.d: the values of casts of 0x1234567890abcdef.
func TestPrintfInts(t *testing.T) {
	const v = 0x1234567890abcdef
	i8 := program.Int{Bits: v, Size: 1, Signed: true}
	i16 := program.Int{Bits: v, Size: 2, Signed: true}
	i32 := program.Int{Bits: v, Size: 4, Signed: true}
	i64 := program.Int{Bits: v, Size: 8, Signed: true}
	u8 := program.Int{Bits: v, Size: 1}
	u16 := program.Int{Bits: v, Size: 2}
	u32 := program.Int{Bits: v, Size: 4}
	u64 := program.Int{Bits: v, Size: 8}
	tests := []struct {
		f    string
		v    program.Value
		want string
	}{
		{"%d", i8, "-17"}, // the corpus's .r (xfail) shows 239
		{"%d", i16, "-12817"},
		{"%d", i32, "-1867788817"},
		{"%d", i64, "1311768467294899695"},
		{"%d", u8, "239"},
		{"%d", u16, "52719"},
		{"%d", u32, "2427178479"},
		{"%d", u64, "1311768467294899695"},
		{"%u", i8, "239"},
		{"%u", i16, "52719"},
		{"%u", i32, "2427178479"},
		{"%u", i64, "1311768467294899695"},
		{"%x", u8, "ef"},
		{"%x", u16, "cdef"},
		{"%x", u32, "90abcdef"},
		{"%x", u64, "1234567890abcdef"},
		{"%x", i8, "ef"},
		{"%o", u8, "357"},
		{"%o", u16, "146757"},
		{"%o", u32, "22052746757"},
		{"%o", u64, "110642547422052746757"},
		{"%o", i32, "22052746757"},
		{"%p", program.U64(0x90abcdef), "90abcdef"},
	}
	for _, tt := range tests {
		got := printfAll(t, &Printer{}, []printfCall{{tt.f, []program.Value{tt.v}}})
		if got != tt.want {
			t.Errorf("%s of %#v = %q, want %q", tt.f, tt.v, got, tt.want)
		}
	}
}

// printa/tst.dynwidth.d: keys feed dynamic widths.
func TestPrintaDynWidth(t *testing.T) {
	p := &Printer{}
	var b strings.Builder
	for _, f := range []string{"-->%-*d<--\n", "-->%*d<--\n"} {
		pf, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range [][]program.Value{{program.I32(10), program.I32(100)}, {program.I32(-10), program.I32(200)}} {
			if err := p.Printa(&b, pf, k, []program.Value{program.I64(1)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := "-->100       <--\n-->200       <--\n-->       100<--\n-->200       <--\n"
	if b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
}

func TestPrintaAggCursor(t *testing.T) {
	f, err := Parse("%@d %@d %@d|%s\n")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := (&Printer{}).Printa(&b, f, []program.Value{program.String("k")}, []program.Value{program.I64(1), program.I64(2)}); err != nil {
		t.Fatal(err)
	}
	if want := "1 2 2|k\n"; b.String() != want {
		t.Errorf("got %q want %q", b.String(), want)
	}
	if err := (&Printer{}).Printf(&b, f, nil); err == nil {
		t.Errorf("printf with %%@ and no results: want error")
	}
}

// printf/tst.precs.d, tst.widths.d, tst.widths1.d
func TestPrintfPrecsWidths(t *testing.T) {
	hello := program.String("hello")
	var calls []printfCall
	for i := 0; i <= 5; i++ {
		calls = append(calls, printfCall{"%." + itoa(i) + "s\n", []program.Value{hello}})
	}
	for x := 0; x <= 5; x++ {
		calls = append(calls, printfCall{"%.*s\n", []program.Value{program.I32(int32(x)), hello}})
	}
	for i := 0; i <= 5; i++ {
		calls = append(calls, printfCall{"%" + itoa(i) + "d\n", []program.Value{program.I32(1)}})
	}
	for x := 0; x <= 5; x++ {
		calls = append(calls, printfCall{"%*d\n", []program.Value{program.I32(int32(x)), program.I32(1)}})
	}
	for x := 0; x <= 5; x++ {
		calls = append(calls, printfCall{"%?d\n", []program.Value{program.I64(int64(x))}})
	}
	got := printfAll(t, &Printer{}, calls)
	want := "hello\nh\nhe\nhel\nhell\nhello\n" + "hello\nh\nhe\nhel\nhell\nhello\n" +
		"1\n1\n 1\n  1\n   1\n    1\n" + "1\n1\n 1\n  1\n   1\n    1\n"
	for x := 0; x <= 5; x++ {
		want += "               " + itoa(x) + "\n"
	}
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPrintfTime(t *testing.T) {
	p := &Printer{Location: time.UTC}
	// 2006-01-01 00:00:00 UTC in nanoseconds.
	ns := uint64(time.Date(2006, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	got := printfAll(t, p, []printfCall{
		{"%Y|", []program.Value{program.U64(ns)}},
		{"%-22Y|", []program.Value{program.U64(ns + 3e9)}},
		{"%T", []program.Value{program.U64(ns)}},
	})
	want := "2006 Jan  1 00:00:00|2006 Jan  1 00:00:03  |Sun, 01 Jan 2005 00:00:00 UTC"
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

// actions/printf/tst.conv_T.r and tst.conv_Y.r (run with TZ=US/Pacific).
func TestPrintfTimeZone(t *testing.T) {
	loc, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skipf("no time zone data: %v", err)
	}
	p := &Printer{Location: loc}
	var y, tt []printfCall
	for _, sec := range []uint64{0, 1062609821, 2147483647} {
		y = append(y, printfCall{"%Y\n", []program.Value{program.U64(sec * 1e9)}})
		tt = append(tt, printfCall{"%T\n", []program.Value{program.U64(sec * 1e9)}})
	}
	if got, want := printfAll(t, p, y), "1969 Dec 31 16:00:00\n2003 Sep  3 10:23:41\n2038 Jan 18 19:14:07\n"; got != want {
		t.Errorf("%%Y: got %q want %q", got, want)
	}
	if got, want := printfAll(t, p, tt), "Wed, 31 Dec 1970 16:00:00 PST\nWed, 03 Sep 2003 10:23:41 PDT\nMon, 18 Jan 2038 19:14:07 PST\n"; got != want {
		t.Errorf("%%T: got %q want %q", got, want)
	}
}

// escape writes C escapes, octal for other unprintable bytes, and stops
// at a NUL.
func TestEscape(t *testing.T) {
	in := "a\a\b\f\n\r\t\v\"\\ z\x01\xff\x00after"
	want := `a\a\b\f\n\r\t\v\"\\ z\001\377\0`
	if got := escape(in); got != want {
		t.Errorf("escape(%q) = %q, want %q", in, got, want)
	}
}
