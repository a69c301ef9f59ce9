package dtrace

// SpecKind says how a Source's text is to be read: as a D program or as a
// probe specifier of one of dtrace(1M)'s -n/-P/-m/-f/-i options.
type SpecKind int

// Kinds of Source.
const (
	// SpecProgram is D program text (-s FILE, or a program string).
	SpecProgram SpecKind = iota
	// SpecName is -n: a probe description, optionally with a predicate
	// and action list.
	SpecName
	// SpecProvider is -P: a provider name.
	SpecProvider
	// SpecModule is -m: a module name (or provider:module).
	SpecModule
	// SpecFunction is -f: a function name (or ...:function).
	SpecFunction
	// SpecID is -i: a probe id.
	SpecID
)

// Source is one program handed to Compile: the text of a -s file or of
// a -n/-P/-m/-f/-i argument.
type Source struct {
	// Name is what messages call the source: the script path as given
	// to -s, or the specifier text.
	Name string
	// Text is the program text (after preprocessing, for -C).
	Text string
	// Kind says how to read Text.
	Kind SpecKind
	// Script marks a -s file: messages call it "script" (otherwise
	// "description").
	Script bool
	// MacroArgs are $0, $1, ... for this source.
	MacroArgs []string
	// LineOffset is added to line numbers of Text (a script whose
	// interpreter line was removed, or preprocessor output).
	LineOffset int
}

// IsScript reports whether the source is a -s script file; messages call
// it "script" rather than "description".
func (s Source) IsScript() bool { return s.Script }
