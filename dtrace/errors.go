package dtrace

import (
	"fmt"
	"strings"
)

// CompileError is a compile-time error in dtrace's words: an optional
// D_* tag (shown with -xerrtags), a line number and a message. Its Error
// method gives the text after "failed to compile script NAME: ".
type CompileError struct {
	Tag  string // D_SYNTAX, D_IDENT_UNDEF, ...
	Line int    // 0 when the error has no line
	// File names the file of the error when it is not the source being
	// compiled (a library file of a -L directory).
	File     string
	Msg      string
	ShowTags bool // -xerrtags
}

func (e *CompileError) Error() string {
	var b strings.Builder
	if e.ShowTags && e.Tag != "" {
		fmt.Fprintf(&b, "[%s] ", e.Tag)
	}
	switch {
	case e.File != "":
		fmt.Fprintf(&b, "\"%s\", line %d: ", e.File, e.Line)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// SourceError wraps an error with the source it came from, so that the
// command can say "failed to compile script x.d: ..." or "invalid probe
// specifier ...: ...".
type SourceError struct {
	Source Source
	Err    error
}

func (e *SourceError) Error() string {
	if e.Source.IsScript() {
		return fmt.Sprintf("failed to compile script %s: %v", e.Source.Name, e.Err)
	}
	// Lines are counted in files only: dtrace's compiler has no line
	// number to give for a program on the command line.
	err := e.Err
	if ce, ok := err.(*CompileError); ok && ce.Line > 0 && ce.File == "" {
		noLine := *ce
		noLine.Line = 0
		err = &noLine
	}
	return fmt.Sprintf("invalid probe specifier %s: %v", e.Source.Name, err)
}

func (e *SourceError) Unwrap() error { return e.Err }
