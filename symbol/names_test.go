package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ulikunitz/xz"
)

// testObject makes an Object of the function symbols syms, whose section
// indices refer to sections laid out as secs ([addr, size] pairs).
func testObject(secs [][2]uint64, syms []elf.Symbol) *Object {
	src := &elf.File{}
	for _, s := range secs {
		src.Sections = append(src.Sections, &elf.Section{SectionHeader: elf.SectionHeader{Addr: s[0], Size: s[1]}})
	}
	o := &Object{objectData: &objectData{data: map[string]uint64{}}}
	o.addFuncs(syms, src)
	o.sortFuncs()
	return o
}

func fn(name string, value, size uint64, section elf.SectionIndex) elf.Symbol {
	return elf.Symbol{Name: name, Value: value, Size: size, Section: section,
		Info: elf.ST_INFO(elf.STB_GLOBAL, elf.STT_FUNC)}
}

// TestLookupBounds: an address is named by a function only inside it:
// within its size, or, for a function of no size, before the next
// function and the end of its section. _fini (no size, alone in .fini)
// names its own bytes and nothing 1 MB past them; __restore_rt (no size)
// names the address a signal frame returns to.
func TestLookupBounds(t *testing.T) {
	o := testObject([][2]uint64{{}, {0x1000, 0x1000}, {0x2000, 9}, {0x3000, 0x100}}, []elf.Symbol{
		fn("f", 0x1000, 0x10, 1),
		fn("restore_rt", 0x1020, 0, 1), // next function at 0x1030
		fn("g", 0x1030, 0x40, 1),
		fn("outer", 0x1100, 0x100, 1),
		fn("inner", 0x1110, 0x10, 1), // nested in outer
		fn("_fini", 0x2000, 0, 2),    // alone: its section ends at 0x2009
		fn("abs", 0x2800, 0, elf.SHN_ABS),
	})
	for _, tc := range []struct {
		addr uint64
		name string // "" for none
	}{
		{0x1000, "f"}, {0x100f, "f"}, {0x1010, ""}, {0x101f, ""},
		{0x1020, "restore_rt"}, {0x102f, "restore_rt"},
		{0x1030, "g"}, {0x106f, "g"}, {0x1070, ""},
		{0x1115, "inner"}, {0x1120, "outer"}, {0x11ff, "outer"}, {0x1200, ""},
		{0x2000, "_fini"}, {0x2008, "_fini"}, {0x2009, ""}, {0x2000 + 0x125b70, ""},
		{0x2800, "abs"}, {0x2801, ""},
		{0xfff, ""},
	} {
		f, ok := o.Lookup(tc.addr)
		if ok != (tc.name != "") || f.Name != tc.name {
			t.Errorf("Lookup(%#x) = %q %v, want %q", tc.addr, f.Name, ok, tc.name)
		}
		if ok && f.Size > 0 && tc.addr-f.Value >= f.Size {
			t.Errorf("Lookup(%#x) = %s+%#x beyond its size %#x", tc.addr, f.Name, tc.addr-f.Value, f.Size)
		}
	}
}

// TestParseDebugLink: name, padding to four bytes, CRC in the object's
// byte order; a missing CRC or a name with a directory is refused.
func TestParseDebugLink(t *testing.T) {
	link := func(name string, crc uint32, order binary.AppendByteOrder) []byte {
		b := append([]byte(name), 0)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return order.AppendUint32(b, crc)
	}
	for _, order := range []interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}{binary.LittleEndian, binary.BigEndian} {
		for _, name := range []string{"a", "abc", "abcd", "libc.so.6.debug"} {
			got, crc, err := parseDebugLink(link(name, 0xdeadbeef, order), order)
			if err != nil || got != name || crc != 0xdeadbeef {
				t.Errorf("%q: %q %#x %v", name, got, crc, err)
			}
		}
	}
	for _, b := range [][]byte{
		nil, {0}, []byte("abc"), []byte("abc\x00"), []byte("abc\x00\x01\x02"),
		link("../etc/passwd", 1, binary.LittleEndian), link("..", 1, binary.LittleEndian),
	} {
		if name, _, err := parseDebugLink(b, binary.LittleEndian); err == nil {
			t.Errorf("%q: accepted as %q", b, name)
		}
	}
}

// TestPerfMap: "START SIZE name" lines in hex, 0x optional, names with
// spaces; bad lines skipped; a later line wins over an earlier one for
// the same bytes; nothing outside [START, START+SIZE).
func TestPerfMap(t *testing.T) {
	const text = "7f0000001000 40 LazyCompile:~foo /app/x.js:3:10\n" +
		"0x7f0000002000 0x10 py::f:/tmp/a.py\n" +
		"garbage\n" +
		"7f0000003000 zz bad\n" +
		"7f0000004000 0 empty\n" +
		"ffffffffffffffff 10 wraps\n" +
		"7f0000001010 8 replaced\r\n" +
		"7f0000005000 10\n"
	syms, err := parsePerfMap(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 3 {
		t.Fatalf("%d functions: %+v", len(syms), syms)
	}
	for _, tc := range []struct {
		addr uint64
		name string
	}{
		{0x7f0000001000, "LazyCompile:~foo /app/x.js:3:10"}, {0x7f000000103f, "LazyCompile:~foo /app/x.js:3:10"},
		{0x7f0000001010, "replaced"}, {0x7f0000001017, "replaced"}, {0x7f0000001018, "LazyCompile:~foo /app/x.js:3:10"},
		{0x7f0000001040, ""}, {0x7f0000002000, "py::f:/tmp/a.py"}, {0x7f0000002010, ""}, {0x7f0000004000, ""},
	} {
		s, ok := lookupPerfSym(syms, tc.addr)
		if ok != (tc.name != "") || s.Name != tc.name {
			t.Errorf("lookup(%#x) = %q %v, want %q", tc.addr, s.Name, ok, tc.name)
		}
	}
	long := strings.Repeat("x", 200<<10)
	syms, err = parsePerfMap(strings.NewReader("1000 10 " + long + "\n2000 10 short\n"))
	if err != nil || len(syms) != 1 || syms[0].Name != "short" {
		t.Errorf("a line longer than the buffer: %d functions, %v", len(syms), err)
	}
}

// TestDebuginfodEnv reads the environment as elfutils does: URLs split
// at spaces, "buildid" appended with one slash, duplicates dropped; the
// cache directory from DEBUGINFOD_CACHE_PATH, XDG_CACHE_HOME or HOME;
// DEBUGINFOD_TIMEOUT in seconds, with dtrace's bound kept for 0.
func TestDebuginfodEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if d := newDebuginfod(env("DEBUGINFOD_URLS", "  ")); d != nil {
		t.Errorf("no URLs: a client %+v", d)
	}
	d := newDebuginfod(env("DEBUGINFOD_URLS", "http://a:1  http://b:2/ http://a:1", "HOME", "/h", "DEBUGINFOD_TIMEOUT", "5"))
	if got := strings.Join(d.urls, " "); got != "http://a:1/buildid http://b:2/buildid" {
		t.Errorf("urls %q", got)
	}
	if d.cache != "/h/.cache/debuginfod_client" || d.timeout != 5*time.Second || d.retries != 2 {
		t.Errorf("cache %q timeout %v retries %d", d.cache, d.timeout, d.retries)
	}
	d = newDebuginfod(env("DEBUGINFOD_URLS", "http://a", "XDG_CACHE_HOME", "/x", "DEBUGINFOD_TIMEOUT", "0", "DEBUGINFOD_RETRY_LIMIT", "0"))
	if d.cache != "/x/debuginfod_client" || d.timeout != debuginfodTimeout || d.retries != 0 {
		t.Errorf("cache %q timeout %v retries %d", d.cache, d.timeout, d.retries)
	}
	d = newDebuginfod(env("DEBUGINFOD_URLS", "http://a", "DEBUGINFOD_CACHE_PATH", "/c", "XDG_CACHE_HOME", "/x"))
	if d.cache != "/c" {
		t.Errorf("cache %q", d.cache)
	}
	old := t.TempDir()
	if err := os.Mkdir(filepath.Join(old, ".debuginfod_client_cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := cacheDir(env("HOME", old, "XDG_CACHE_HOME", "/x")); got != filepath.Join(old, ".debuginfod_client_cache") {
		t.Errorf("an existing ~/.debuginfod_client_cache is not used: %q", got)
	}
}

// xzOf compresses b as one xz stream.
func xzOf(t testing.TB, b []byte, dictCap int) []byte {
	var buf bytes.Buffer
	w, err := xz.WriterConfig{DictCap: dictCap}.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUnxz: a stream expands to what it holds; a stream larger than the
// limit, one whose dictionary is larger than xz -9's, a truncated one
// and one with a byte changed are refused.
func TestUnxz(t *testing.T) {
	data := bytes.Repeat([]byte("MiniDebugInfo "), 1000)
	b := xzOf(t, data, 8<<20)
	got, err := unxz(b, 1<<20)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("unxz: %d bytes, %v", len(got), err)
	}
	if _, err := unxz(append(b, 0, 0, 0, 0), 1<<20); err != nil {
		t.Errorf("stream padding: %v", err)
	}
	if _, err := unxz(b, int64(len(data))-1); !errors.Is(err, errBigXZ) {
		t.Errorf("a stream above the limit: %v", err)
	}
	if _, err := unxz(xzOf(t, data, 128<<20), 1<<20); !errors.Is(err, errBigXZ) {
		t.Errorf("a 128 MiB dictionary: %v", err)
	}
	if _, err := unxz(b[:len(b)-13], 1<<20); err == nil {
		t.Errorf("a truncated stream is accepted")
	}
	bad := bytes.Clone(b)
	bad[len(bad)/2] ^= 0x55
	if got, err := unxz(bad, 1<<20); err == nil && !bytes.Equal(got, data) {
		t.Errorf("a damaged stream expands to other bytes without an error")
	}
}
