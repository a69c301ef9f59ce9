package dlib

import (
	"regexp"
	"runtime"
	"sort"
	"sync"

	"github.com/dtrace-go/dtrace/dlang/check"
)

// patterns are the regular expressions of the names a library file
// defines at its top level. They are compiled when first needed: the
// system library's names are in index (index.go), so a run that loads
// no file of its own never compiles them.
var patterns = sync.OnceValue(func() *definePatterns {
	return &definePatterns{
		inlineName: regexp.MustCompile(`(?m)^\s*inline\b[^=;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=`),
		typedefKw:  regexp.MustCompile(`(?m)^\s*typedef\b`),
		externName: regexp.MustCompile(`(?m)^\s*extern\b[^;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?;`),
		tagName:    regexp.MustCompile(`\b(?:struct|union|enum)\s+([A-Za-z_]\w*)\s*\{`),
		enumerator: regexp.MustCompile(`(?m)^\s*([A-Z_][A-Z0-9_]*)\s*(?:=[^,\n]*)?,?\s*(?:/\*.*)?$`),
	}
})

type definePatterns struct {
	inlineName, typedefKw, externName, tagName, enumerator *regexp.Regexp
}

// providerNeeds names library files whose translators give the args[] of
// a provider's probes: a program naming the provider and args needs the
// file.
var providerNeeds = map[string][]string{
	"proc":  {"procfs.d"},
	"sched": {"procfs.d"},
	"io":    {"io.d", "io-dev.d", "io-dev61.d"},
	"ip":    {"ip.d"},
	"tcp":   {"tcp.d"},
	"udp":   {"udp.d"},
}

// Defines returns the names a library file defines: its inlines,
// typedefs, struct/union/enum tags, enumerators and the kernel
// variables its externs type.
func Defines(text string) []string {
	seen := map[string]bool{}
	p := patterns()
	for _, re := range []*regexp.Regexp{p.inlineName, p.tagName, p.externName} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			seen[m[1]] = true
		}
	}
	for _, n := range typedefNames(text) {
		seen[n] = true
	}
	for _, m := range p.enumerator.FindAllStringSubmatch(text, -1) {
		seen[m[1]] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// typedefNames returns the names top-level typedefs declare: the last
// identifier before the `;` that ends each, outside braces and brackets
// (`typedef struct s { ... } name_t;`, `typedef int arr_t[4];`).
func typedefNames(text string) []string {
	var out []string
	for _, loc := range patterns().typedefKw.FindAllStringIndex(text, -1) {
		depth, last := 0, ""
	scan:
		for i := loc[1]; i < len(text); i++ {
			switch c := text[i]; {
			case c == '{' || c == '[' || c == '(':
				depth++
			case c == '}' || c == ']' || c == ')':
				depth--
			case c == ';' && depth == 0:
				break scan
			case depth == 0 && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
				j := i
				for j < len(text) && (text[j] == '_' || text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9') {
					j++
				}
				last = text[i:j]
				i = j - 1
			}
		}
		if last != "" {
			out = append(out, last)
		}
	}
	return out
}

// words returns the identifiers of texts: letters, digits and
// underscores, not starting with a digit.
func words(texts []string) map[string]bool {
	ws := map[string]bool{}
	for _, t := range texts {
		for i := 0; i < len(t); {
			c := t[i]
			if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				if c >= '0' && c <= '9' {
					// A number's digits and letters (0x1f, 10ms) are not a word.
					for i < len(t) && isWordByte(t[i]) {
						i++
					}
					continue
				}
				i++
				continue
			}
			j := i
			for j < len(t) && isWordByte(t[j]) {
				j++
			}
			ws[t[i:j]] = true
			i = j
		}
	}
	return ws
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Needed returns the files of srcs that the programs' texts use — those
// defining a name the texts mention as a word — with the files they
// depend on, in the order of srcs. Loading only those keeps dtrace's
// start-up from parsing and checking the whole library (and reading the
// kernel's BTF) for programs that use none of it.
func Needed(srcs []Source, texts ...string) []Source {
	byName := map[string]Source{}
	for _, s := range srcs {
		byName[s.Name] = s
	}
	files := make([]fileIndex, len(srcs))
	for i, s := range srcs {
		files[i] = fileIndex{s.Name, definesCached(s.Text), textDependencies(s.Text)}
	}
	need := neededNames(words(texts), files)
	var out []Source
	for _, s := range srcs {
		if need[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// NeededSystem is Needed(Sources(), texts...), found from the index of
// the system library's names (index.go): only the files needed are read.
func NeededSystem(texts ...string) []Source {
	need := neededNames(words(texts), systemIndex())
	var out []Source
	for _, name := range order {
		if need[name] {
			out = append(out, source(name))
		}
	}
	return out
}

// fileIndex is what Needed knows of a library file: its name, the
// names it defines (Defines) and the files it depends on.
type fileIndex struct {
	name             string
	defines, depends []string
}

// neededNames returns the names of the files that define one of words,
// or that a builtin or provider named among words needs, with the files
// they depend on.
func neededNames(words map[string]bool, files []fileIndex) map[string]bool {
	deps := map[string][]string{}
	for _, f := range files {
		deps[f.name] = f.depends
	}
	need := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		d, ok := deps[name]
		if !ok || need[name] {
			return
		}
		need[name] = true
		for _, n := range d {
			add(n)
		}
	}
	for w := range words {
		if f := check.BuiltinLib(w); f != "" {
			// The builtin's type or value comes from the file (curcpu's
			// cpuinfo_t, ppid's and progenyof()'s walk of task_struct).
			add(f)
		}
		if fs, ok := providerNeeds[w]; ok && words["args"] {
			for _, f := range fs {
				add(f)
			}
		}
	}
	for _, f := range files {
		for _, n := range f.defines {
			if words[n] {
				add(f.name)
				break
			}
		}
	}
	return need
}

// defines caches Defines by file text: the library's files are the same
// for the life of the process.
var defines sync.Map // text -> []string

func definesCached(text string) []string {
	if v, ok := defines.Load(text); ok {
		return v.([]string)
	}
	d := Defines(text)
	defines.Store(text, d)
	return d
}

// systemIndex is the index of the system library for this architecture:
// the files alike on every architecture, then this one's own.
var systemIndex = sync.OnceValue(func() []fileIndex {
	return append(append([]fileIndex{}, index...), indexByArch[runtime.GOARCH]...)
})
