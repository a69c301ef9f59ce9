package check

import (
	"fmt"
	"sort"

	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// Error is one compile error: where, which D_* tag, and dtrace's message.
// Msg may span several lines (continuation lines start with a tab), as in
// "argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string".
type Error struct {
	Pos      syntax.Pos
	Position syntax.Position // decoded Pos; Line 0 when the error has no position
	Tag      Tag
	Msg      string
}

// Error formats the error as dtrace does after "failed to compile
// script X: ": "line N: msg", or just msg when there is no line or the
// source has no file name (-n text, which dtrace reports without a line).
func (e *Error) Error() string {
	if e.Position.Line > 0 && e.Position.Filename != "" {
		return fmt.Sprintf("line %d: %s", e.Position.Line, e.Msg)
	}
	return e.Msg
}

// Tagged formats the error with its tag in front, as with -xerrtags:
// "[D_FOO] line N: msg".
func (e *Error) Tagged() string { return "[" + e.Tag.String() + "] " + e.Error() }

// ErrorList is a list of errors in the order the checker found them. dtrace
// stops at its first error, so the first one is what dtrace would report;
// the list keeps the rest for tools and tests.
type ErrorList []*Error

// Error returns the first error's text, as syntax.ErrorList does.
func (l ErrorList) Error() string { return syntax.FirstError(l) }

// Err returns l as an error, or nil if it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Sort orders the list by position, keeping the order of errors at the
// same position.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool { return l[i].Pos < l[j].Pos })
}
