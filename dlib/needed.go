package dlib

import (
	"regexp"
	"sort"
	"sync"

	"github.com/dtrace-go/dtrace/dlang/check"
)

// Patterns of the names a library file defines at its top level.
var (
	inlineName = regexp.MustCompile(`(?m)^\s*inline\b[^=;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?=`)
	typedefKw  = regexp.MustCompile(`(?m)^\s*typedef\b`)
	externName = regexp.MustCompile(`(?m)^\s*extern\b[^;]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?;`)
	tagName    = regexp.MustCompile(`\b(?:struct|union|enum)\s+([A-Za-z_]\w*)\s*\{`)
	enumerator = regexp.MustCompile(`(?m)^\s*([A-Z_][A-Z0-9_]*)\s*(?:=[^,\n]*)?,?\s*(?:/\*.*)?$`)
	word       = regexp.MustCompile(`[A-Za-z_]\w*`)
)

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
	for _, re := range []*regexp.Regexp{inlineName, tagName, externName} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			seen[m[1]] = true
		}
	}
	for _, n := range typedefNames(text) {
		seen[n] = true
	}
	for _, m := range enumerator.FindAllStringSubmatch(text, -1) {
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
	for _, loc := range typedefKw.FindAllStringIndex(text, -1) {
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

// Needed returns the files of srcs that the programs' texts use — those
// defining a name the texts mention as a word — with the files they
// depend on, in the order of srcs. Loading only those keeps dtrace's
// start-up from parsing and checking the whole library (and reading the
// kernel's BTF) for programs that use none of it.
func Needed(srcs []Source, texts ...string) []Source {
	words := map[string]bool{}
	for _, t := range texts {
		for _, w := range word.FindAllString(t, -1) {
			words[w] = true
		}
	}
	byName := map[string]Source{}
	for _, s := range srcs {
		byName[s.Name] = s
	}
	need := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		s, ok := byName[name]
		if !ok || need[name] {
			return
		}
		need[name] = true
		for _, d := range textDependencies(s.Text) {
			add(d)
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
	for _, s := range srcs {
		for _, n := range definesCached(s.Text) {
			if words[n] {
				add(s.Name)
				break
			}
		}
	}
	var out []Source
	for _, s := range srcs {
		if need[s.Name] {
			out = append(out, s)
		}
	}
	return out
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
