package dtrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/dtrace-go/dtrace/internal/cpp"
)

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
}

// IsScript reports whether the source is a -s script file; messages call
// it "script" rather than "description".
func (s Source) IsScript() bool { return s.Script }

// Noun is what messages call the source: "script" for a -s file,
// "description" otherwise.
func (s Source) Noun() string {
	if s.Script {
		return "script"
	}
	return "description"
}

// Label is the source as messages quote it: the script's path, or the
// specifier up to its predicate or body.
func (s Source) Label() string {
	if s.Script {
		return s.Name
	}
	if i := strings.IndexAny(s.Name, "{/;"); i >= 0 {
		return s.Name[:i]
	}
	return s.Name
}

// ReadScript reads the D script at path as dtrace -s does, for Compile:
// "/dev/stdin" reads stdin when it is not nil, an interpreter line
// ("#!...") is blanked, and under the cpp option (-C) the text goes
// through the preprocessor, whose messages go to the handle's Stderr.
// $0 is path and operands are $1, $2, ... The error is worded for
// printing after "dtrace: ".
func (h *Handle) ReadScript(path string, stdin io.Reader, operands []string) (Source, error) {
	src := Source{Name: path, Kind: SpecProgram, Script: true, MacroArgs: append([]string{path}, operands...)}
	var text []byte
	var err error
	if path == "/dev/stdin" && stdin != nil {
		text, err = io.ReadAll(stdin)
	} else {
		text, err = os.ReadFile(path)
	}
	if err != nil {
		return src, fmt.Errorf("failed to open %s: %s", path, Strerror(err))
	}
	text = cpp.StripInterpreter(text)
	if !h.opts.CPP {
		src.Text = string(text)
		return src, nil
	}
	res, err := cpp.Run(context.Background(), cpp.Config{
		Path:    h.opts.CPPPath,
		Args:    h.opts.CPPArgs,
		Stdc:    h.opts.Stdc,
		Version: h.opts.VersionNum,
	}, text, h.conf.Stderr)
	if err != nil {
		return src, &SourceError{Source: src, Err: err}
	}
	src.Text = res.Text
	return src, nil
}

// Strerror words err as strerror(3) does where it is a system error (a
// missing file or command reads "No such file or directory"), as dtrace's
// messages quote it; other errors keep their own text.
func Strerror(err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return "No such file or directory"
	case errors.As(err, &errno):
		s := errno.Error()
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return err.Error()
}
