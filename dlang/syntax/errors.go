package syntax

import (
	"fmt"
	"sort"
)

// Error is one compile error found by the scanner or the parser.
type Error struct {
	// Pos is where dtrace reports the error. Its Line is the line dtrace
	// prints, which is the line the lexer was reading at the time: for an
	// error at end of input that is the line after the last newline.
	Pos Position
	// Msg is the message in dtrace's words without tag or line, e.g.
	// `syntax error near ";"`.
	Msg string
	// Tag is the D_* error tag, e.g. "D_SYNTAX"; dtrace shows it only
	// under -xerrtags.
	Tag string
}

// Error formats e as dtrace does without -xerrtags: "line N: msg" for a
// script file, the bare message for text without a file name (-n and
// friends), which dtrace reports without a line.
func (e *Error) Error() string {
	if e.Pos.Filename == "" || e.Pos.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Pos.Line, e.Msg)
}

// ErrorList is a list of errors sorted by position. The parser stops at
// the first error, as dtrace does, so a list from Parse holds one error;
// the type leaves room for callers that merge lists.
type ErrorList []*Error

// Error returns the first error's text, as dtrace reports only the first.
func (l ErrorList) Error() string { return FirstError(l) }

// FirstError is the text of a list of errors (this package's, the
// checker's): the first error's, which is what dtrace reports, and how
// many more there are.
func FirstError[E error](l []E) string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0].Error(), len(l)-1)
}

// Sort sorts the list by file, line and column.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// Err returns the list as an error, or nil when it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
