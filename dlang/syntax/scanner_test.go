package syntax

import "testing"

// The keyword subsets name keywords only: a name missing from keywords
// would map to the zero Token.
func TestKeywordSubsets(t *testing.T) {
	for what, m := range map[string]map[string]Token{"outerKeywords": outerKeywords, "typeKeywords": typeKeywords} {
		for name, tok := range m {
			if tok == 0 || keywords[name] != tok {
				t.Errorf("%s: %q is not a keyword", what, name)
			}
		}
	}
	if len(outerKeywords) != 28 || len(typeKeywords) != 10 {
		t.Errorf("%d outer keywords, %d type keywords, want 28 and 10", len(outerKeywords), len(typeKeywords))
	}
}
