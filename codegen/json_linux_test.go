//go:build linux

package codegen

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// jsonCase is one json(doc, sel) call and what illumos returns: the value,
// or "<NULL>".
type jsonCase struct{ doc, sel, want string }

// dq quotes s as a D string literal.
func dq(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// runJSON runs the cases, sixteen clauses to a program, and compares
// what each prints; it also checks each case's want against jsonRef.
func runJSON(t *testing.T, cases []jsonCase, opts Options) {
	t.Helper()
	n := int(opts.StrSize)
	if n == 0 {
		n = 256
	}
	found := 0
	for _, c := range cases {
		v, ok := jsonRef(c.doc, c.sel, n)
		if !ok {
			v = null
		} else {
			found++
		}
		if v != c.want {
			t.Errorf("jsonRef(%s, %s) = %s, want %s", dq(c.doc), dq(c.sel), v, c.want)
		}
	}
	t.Logf("%d cases, %d with a value", len(cases), found)
	for start := 0; start < len(cases); start += 16 {
		batch := cases[start:min(start+16, len(cases))]
		var src, want strings.Builder
		for _, c := range batch {
			fmt.Fprintf(&src, "BEGIN { this->s = json(%s, %s); printf(\"[%%s]\\n\", this->s != NULL ? this->s : \"<NULL>\"); }\n", dq(c.doc), dq(c.sel))
			fmt.Fprintf(&want, "[%s]\n", c.want)
		}
		got := runD(t, src.String(), opts)
		if got == want.String() {
			continue
		}
		g, w := strings.Split(got, "\n"), strings.Split(want.String(), "\n")
		for i, c := range batch {
			if i >= len(g) || g[i] != w[i] {
				gi := "(nothing)"
				if i < len(g) {
					gi = g[i]
				}
				t.Errorf("json(%s, %s) = %s, want %s", dq(c.doc), dq(c.sel), gi, w[i])
			}
		}
	}
}

const null = "<NULL>"

func TestJSON(t *testing.T) {
	needBPF(t)
	cases := []jsonCase{
		// Scalars by key.
		{`{"a":1}`, "a", "1"},
		{`{"a":"x"}`, "a", "x"},
		{`{"a":1,"b":2}`, "b", "2"},
		{` { "a" : 1 , "b"	: 2 } `, "b", "2"},
		{`{"a":true}`, "a", "true"},
		{`{"a":false}`, "a", "false"},
		{`{"a":null}`, "a", "null"},
		{`{"a":-12.5e+3}`, "a", "-12.5e+3"},
		{`{"a":1E5}`, "a", "1E5"},
		{`{"a":1e-5}`, "a", "1e-5"},
		{`{"a":-5}`, "a", "-5"},
		{`{"a":1.2.3}`, "a", "1.2"},
		{`{"a":1.5x}`, "a", "1.5"},
		{`{"a":"x","b":tru}`, "a", "x"},
		{`{"a":"v"}xyz`, "a", "v"},
		{`{"a":1,"a":2}`, "a", "1"},
		// Keys: whole, raw, empty; keys inside skipped values.
		{`{"ab":1,"a":2}`, "a", "2"},
		{`{"a":1,"ab":2}`, "ab", "2"},
		{`{"a":1,"ab":2}`, "abc", null},
		{`{"":5}`, "", "5"},
		{`{"a":1}`, "", null},
		{`{"a\"b":1}`, `a\"b`, "1"},
		{`{"\u0041":1}`, `\u0041`, "1"},
		{`{"\u0041":1}`, "A", null},
		{`{"b":{"a":1},"a":2}`, "a", "2"},
		{`{"x":{"a":1,"b":[1,{"c":2}]},"a":3}`, "a", "3"},
		{`{"x":{"s":"}"},"a":4}`, "a", "4"},
		{`{"x":["]",{"a":0}],"a":5}`, "a", "5"},
		// Objects and arrays, returned whole or gone into.
		{`{"a":{"b":2}}`, "a", `{"b":2}`},
		{`{"a":{"b":2}}`, "a.b", "2"},
		{`{"a":{"b":{"c":"deep"}}}`, "a.b.c", "deep"},
		{`{"a":[1,2,3]}`, "a", "[1,2,3]"},
		{`{"a":[1,2,3]}`, "a[0]", "1"},
		{`{"a":[1,2,3]}`, "a[1]", "2"},
		{`{"a":[1,2,3]}`, "a[2]", "3"},
		{`{"a":[1,2,3]}`, "a[3]", null},
		{`{"a":[1,2,3]}`, "a.1", "2"},
		{`{"a":[[1,2],[3,4]]}`, "a[1]", "[3,4]"},
		{`{"a":[[1,2],[3,4]]}`, "a[1][0]", "3"},
		{`{"a":[{"b":[5,6]}]}`, "a[0].b[1]", "6"},
		{`{"a":{"s":"}{"}}`, "a", `{"s":"}{"}`},
		{`{"a":{"k":"q\"}"}}`, "a", `{"k":"q\"}"}`},
		{`{"a":[]}`, "a", "[]"},
		{`{"a":{}}`, "a", "{}"},
		{`{ "a" : [ 1 , { "b" : "c" } ] }`, "a[1].b", "c"},
		{`{"a":{"":{"b":7}}}`, "a..b", "7"},
		{`{"a":1}`, "[a]", "1"},
		// Top-level arrays.
		{`[10,20]`, "[1]", "20"},
		{`[10,20]`, "1", "20"},
		{`[10,20]`, "a", "10"},
		{`[1 , 2 ]`, "[1]", "2"},
		{`["p","q"]`, "[1]", "q"},
		{`[{"x":1},{"x":2}]`, "[1].x", "2"},
		{`[]`, "[0]", null},
		// Array indexes as strtoll() reads them.
		{`{"a":[1,2]}`, "a[-1]", null},
		{`{"a":[1,2]}`, "a[x]", "1"},
		{`{"a":[1,2]}`, "a[ 1]", "2"},
		{`{"a":[1,2]}`, "a[+1]", "2"},
		{`{"a":[1,2]}`, "a[01]", "2"},
		{`{"a":[1,2]}`, "a[1x]", "2"},
		{`{"a":{"b":1}}`, "a[0]", null},
		// Escapes in strings stay as written.
		{`{"a":"x\"y"}`, "a", `x\"y`},
		{`{"a":"\u00e9"}`, "a", `\u00e9`},
		{`{"a":"\\n"}`, "a", `\\n`},
		{`{"a":"\u00g9"}`, "a", null},
		// Missing values and selectors through scalars.
		{`{"a":1}`, "b", null},
		{`{}`, "a", null},
		{`{"a":{"b":1}}`, "a.c", null},
		{`{"a":1}`, "a.b", null},
		{`{"a":"s"}`, "a.b", null},
		{`{"a":true}`, "a.b", null},
		// Malformed documents.
		{`{a:1}`, "a", null},
		{`"str"`, "a", null},
		{`{"a":1`, "a", null},
		{`{"a":"unterminated`, "a", null},
		{`{"a":tru}`, "a", null},
		{`{"a":nul,"b":1}`, "b", null},
		{`{"a":True}`, "a", null},
		{`{"a":0x10}`, "a", null},
		{`{"a":--5}`, "a", null},
		{`{"a":1-5}`, "a", null},
		{`{"a":[1,2}`, "a", null},
		{`{"a" 1}`, "a", null},
		{`{"a":1 "b":2}`, "b", null},
		{``, "a", null},
	}
	runJSON(t, cases, Options{})
}

// TestJSONStrsize runs json() on documents and selectors at strsize (32)
// and past it: a document is cut at strsize, so a value that closes
// within it is found and one that does not is NULL.
func TestJSONStrsize(t *testing.T) {
	needBPF(t)
	d := "0123456789abcdefghijklmnopqrstuvwxyz"
	key := d[:26]
	cases := []jsonCase{
		{`{"k":"` + d[:24] + `"}`, "k", d[:24]},
		{`{"k":"` + d[:25] + `"}`, "k", d[:25]},
		{`{"k":"` + d[:26] + `"}`, "k", null},
		{`{"k":{"a":"` + d[:18] + `"}}`, "k", `{"a":"` + d[:18] + `"}`},
		{`{"k":{"a":"` + d[:19] + `"}}`, "k", `{"a":"` + d[:19] + `"}`},
		{`{"k":{"a":"` + d[:20] + `"}}`, "k", null},
		{`["` + d[:28] + `"]`, "[0]", d[:28]},
		{`["` + d[:29] + `"]`, "0", d[:29]},
		{`{"` + key + `":1}`, key, "1"},
		{`{"` + key + `":1}`, key + "z", null},
		{`{"` + key + `":1}`, key[:25], null},
		{`{"a":[0,1,2,3,4,5,6,7,8,9,10,11]}`, "a[11]", "11"},
		{`{"a":[0,1,2,3,4,5,6,7,8,9,10,111]}`, "a[11]", null},
		{`{"a":[0,1,2,3,4,5,6,7,8,9,10]}`, "a[10]", "10"},
		{`{"a":1}`, "a.................................", null},
		{`[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]`, "[0][0][0][0][0][0][0][0][0][0][0][0][0][0]", "[[[[1]]]]"},
	}
	runJSON(t, cases, Options{StrSize: 32})
}

// TestJSONArgs runs json() on a document in a variable, its results given
// to other subroutines, NULL arguments (an invalid address fault, as for
// the other string subroutines) and a NULL result traced (the same fault,
// as in DTrace), with both instruction sets (6.1 takes the v3 code).
func TestJSONArgs(t *testing.T) {
	needBPF(t)
	src := `
BEGIN { j = "{\"foo\":42,\"bar\":[\"baz\",{\"q\":null}]}"; k = "bar[1]";
	printf("%d %s %d %s %s\n", strtoll(json(j, "foo")), json(j, "bar[0]"), strlen(json(j, "bar")),
	    json(j, strjoin(k, ".q")), json(json(j, k), "q")); }
BEGIN { trace(json(0, "a")); }
BEGIN { trace(json("{}", 0)); }
BEGIN { trace(json("{}", "a")); }
BEGIN { printf("after\n"); }`
	want := "42 baz 18 null null\n" +
		"fault(clause 1, probe 1, code 1, illval 0x0)\n" +
		"fault(clause 2, probe 1, code 1, illval 0x0)\n" +
		"fault(clause 3, probe 1, code 1, illval 0x0)\n" +
		"after\n"
	bothISAs(t, src, want)
}

// jsonRef is illumos's json(doc, sel) with strsize n, written again in Go
// from its description: the selector split at '.' and '[' (']' and a
// leading '[' dropped), then one pass over at most n characters of doc.
func jsonRef(doc, sel string, n int) (string, bool) {
	if len(doc) > n {
		doc = doc[:n]
	}
	if len(sel) > n {
		sel = sel[:n]
	}
	var elems []string
	var e []byte
	for i := 0; i < len(sel); i++ {
		switch c := sel[i]; {
		case c == '[' && i == 0, c == ']':
		case c == '.' || c == '[':
			elems, e = append(elems, string(e)), nil
		default:
			e = append(e, c)
		}
	}
	elems = append(elems, string(e))
	index := func(s string) int64 {
		s = strings.TrimLeft(s, " \t")
		neg := strings.HasPrefix(s, "-")
		if neg || strings.HasPrefix(s, "+") {
			s = s[1:]
		}
		var v int64
		for ; s != "" && s[0] >= '0' && s[0] <= '9'; s = s[1:] {
			v = v*10 + int64(s[0]-'0')
		}
		if neg {
			return -v
		}
		return v
	}
	const (
		rest = iota
		object
		str
		escape
		unicode
		colon
		comma
		ident
		number
		frac
		exp
		value
		collectObj
	)
	st, found, inArray, isKey, collect := rest, false, false, false, false
	var arrElem, arrPos int64
	var uni, braces, brackets int
	var out []byte
	space := func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	lower := func(c byte) bool { return c >= 'a' && c <= 'z' }
	startArray := func() {
		inArray, arrPos, arrElem = true, 0, index(elems[0])
		found = arrElem == 0
		st = value
	}
	// end reports the scalar in out as the result, a failure, or neither.
	end := func() (string, bool, bool) {
		if !found {
			return "", false, false
		}
		return string(out), len(elems) == 1, true
	}
	for cur := 0; cur < len(doc); cur++ {
		c := doc[cur]
		switch st {
		case rest:
			switch {
			case space(c):
			case c == '{':
				st = object
			case c == '[':
				startArray()
			default:
				return "", false
			}
		case object:
			switch {
			case space(c):
			case c == '"':
				st, isKey = str, true
			default:
				return "", false
			}
		case str:
			switch {
			case c == '\\':
				out = append(out, c)
				st = escape
			case c == '"' && collect:
				out = append(out, c)
				collect, st = false, collectObj
			case c == '"':
				if isKey {
					found = found || string(out) == elems[0]
					st = colon
				} else {
					if v, ok, done := end(); done {
						return v, ok
					}
					st = comma
				}
				out, isKey = nil, false
			default:
				out = append(out, c)
			}
		case escape:
			out = append(out, c)
			st = str
			if c == 'u' {
				uni, st = 0, unicode
			}
		case unicode:
			if !digit(c) && !(c|0x20 >= 'a' && c|0x20 <= 'f') {
				return "", false
			}
			out = append(out, c)
			if uni++; uni == 4 {
				st = str
			}
		case colon:
			switch {
			case space(c):
			case c == ':':
				st = value
			default:
				return "", false
			}
		case comma:
			switch {
			case space(c):
			case c == ',' && inArray:
				st = value
				if arrPos++; arrPos == arrElem {
					found = true
				}
			case c == ',':
				st = object
			default:
				return "", false
			}
		case ident:
			if lower(c) {
				out = append(out, c)
				break
			}
			if s := string(out); s != "true" && s != "false" && s != "null" {
				return "", false
			}
			if v, ok, done := end(); done {
				return v, ok
			}
			out, st = nil, comma
			cur--
		case number, frac, exp:
			if st == number && c == '.' {
				out, st = append(out, c), frac
				break
			}
			if st == number && (c == 'x' || c == 'X') {
				return "", false
			}
			if st != exp && (c == 'e' || c == 'E') {
				out, st = append(out, c), exp
				break
			}
			if st != exp && (c == '+' || c == '-') {
				return "", false
			}
			if digit(c) || c == '+' || c == '-' {
				out = append(out, c)
				break
			}
			if v, ok, done := end(); done {
				return v, ok
			}
			out, st = nil, comma
			cur--
		case value:
			switch {
			case space(c):
			case (c == '{' || c == '[') && len(elems) > 1 && found:
				elems, out = elems[1:], nil
				if c == '[' {
					startArray()
				} else {
					inArray, found, st = false, false, object
				}
			case c == '{' || c == '[':
				if c == '[' {
					brackets = 1
				} else {
					braces = 1
				}
				out, st = append(out, c), collectObj
			case c == '"':
				st = str
			case lower(c):
				out, st = append(out, c), ident
			case c == '-' || digit(c):
				out, st = append(out, c), number
			default:
				return "", false
			}
		case collectObj:
			out = append(out, c)
			switch c {
			case '"':
				collect, st = true, str
				continue
			case ']':
				if brackets == 0 {
					return "", false
				}
				brackets--
			case '}':
				if braces == 0 {
					return "", false
				}
				braces--
			case '{':
				braces++
			case '[':
				brackets++
			}
			if brackets == 0 && braces == 0 {
				if found {
					return string(out), true
				}
				out, st = nil, comma
			}
		}
	}
	return "", false
}

// TestJSONRandom compares json() with jsonRef on documents put together
// from pieces of JSON (and of not quite JSON) and selectors from pieces of
// selectors (runJSON checks the tables' cases against jsonRef too).
func TestJSONRandom(t *testing.T) {
	needBPF(t)
	rnd := rand.New(rand.NewSource(14))
	// Valid pieces are repeated so that most documents are valid up to
	// the value selected.
	keys := []string{`"a"`, `"a"`, `"b"`, `"b"`, `"ab"`, `""`, `"a\"b"`, `"\u0041"`}
	scalars := []string{"1", "23", "-2.5e+3", "1e5", `"x"`, `"y\"z"`, "true", "false", "null",
		"1", "23", `"x"`, "true", "0x1", "tru", "1.2.3", `"\u12g4"`}
	// val writes a value and adds the selectors of the values in it to
	// paths.
	var paths []string
	var val func(path string, depth int) string
	val = func(path string, depth int) string {
		if depth > 2 || rnd.Intn(3) == 0 {
			return scalars[rnd.Intn(len(scalars))]
		}
		var b strings.Builder
		open, close, arr := "{", "}", rnd.Intn(2) == 0
		if arr {
			open, close = "[", "]"
		}
		b.WriteString(open)
		for i, n := 0, rnd.Intn(4); i < n; i++ {
			if i > 0 {
				b.WriteString([]string{",", " , ", ",", ",", ",", ";"}[rnd.Intn(6)])
			}
			p := fmt.Sprintf("%s[%d]", path, i)
			if !arr {
				k := keys[rnd.Intn(len(keys))]
				if p = k[1 : len(k)-1]; path != "" {
					p = path + "." + p
				}
				b.WriteString(k + []string{":", " : ", ":", ":", ":", " "}[rnd.Intn(6)])
			}
			paths = append(paths, p)
			b.WriteString(val(p, depth+1))
		}
		b.WriteString(close)
		return b.String()
	}
	parts := []string{"a", "b", "ab", "", `a\"b`, `\u0041`, "[0]", "[1]", "[2]", "[-1]", "[x]", "[ 1]"}
	var cases []jsonCase
	for len(cases) < 128 {
		paths = paths[:0]
		doc := val("", 0)
		if doc[0] != '{' && doc[0] != '[' {
			continue
		}
		// Most selectors name a value of the document; the others are
		// put together from pieces.
		var sel strings.Builder
		if len(paths) > 0 && rnd.Intn(4) != 0 {
			sel.WriteString(paths[rnd.Intn(len(paths))])
		} else {
			for i, n := 0, 1+rnd.Intn(3); i < n; i++ {
				p := parts[rnd.Intn(len(parts))]
				if i > 0 && p != "" && p[0] != '[' {
					sel.WriteByte('.')
				}
				sel.WriteString(p)
			}
		}
		v, ok := jsonRef(doc, sel.String(), 256)
		if !ok {
			v = null
		}
		cases = append(cases, jsonCase{doc, sel.String(), v})
	}
	runJSON(t, cases, Options{})
}
