package check

import "sync"

// lexedIdents are the names dtrace's lexer takes for a variable at once
// (dt_open.c's identifiers): the builtin table's names but those marked
// unlexed, and NULL (an inline), self and this (the scopes' prefixes).
// It is built on first use: init fills the table's argN rows.
var lexedIdents = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{"NULL": true, "self": true, "this": true}
	for _, f := range funcTable {
		if !f.unlexed && f.Name != "" {
			m[f.Name] = true
		}
	}
	for _, v := range varTable {
		if !v.unlexed && v.Name != "" {
			m[v.Name] = true
		}
	}
	return m
})

// IsPredefinedIdent reports whether name is one of dtrace's predefined
// global identifiers: variables, subroutines, actions and aggregating
// functions of the builtin table, and NULL. dtrace's lexer takes a known
// identifier as a variable at once; for an unknown one it peeks ahead,
// which changes the text it quotes in syntax errors. It is what the
// parser's syntax.Config.IsIdent asks, with the D library's identifiers.
func IsPredefinedIdent(name string) bool { return lexedIdents()[name] }
