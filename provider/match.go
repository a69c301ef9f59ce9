package provider

import (
	"os"
	"strconv"
)

// Match reports whether s matches the DTrace glob pattern: '*' matches any
// run of characters, '?' any one character, "[...]" one character of a set
// (ranges a-z, negation with a leading '!'), and '\' quotes the next
// character. An empty pattern matches everything, as an empty field of a
// probe description does.
func Match(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	return glob(pattern, s)
}

// HasGlob reports whether s contains a glob metacharacter, that is,
// whether it names a set of probes rather than one.
func HasGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			return true
		}
	}
	return false
}

func glob(p, s string) bool {
	// Iterative matching with one backtrack point for the last '*': linear
	// in practice and never recursive, so hostile patterns cannot blow up.
	var starP, starS = -1, 0
	pi, si := 0, 0
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				if ok, next, valid := matchClass(p, pi, s[si]); valid {
					if ok {
						pi, si = next, si+1
						continue
					}
				} else if s[si] == '[' { // unterminated class: a literal '['
					pi, si = pi+1, si+1
					continue
				}
			case '\\':
				if pi+1 < len(p) && p[pi+1] == s[si] {
					pi, si = pi+2, si+1
					continue
				}
			default:
				if c == s[si] {
					pi, si = pi+1, si+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starS++
		pi, si = starP+1, starS
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchClass matches c against the class starting at p[i] == '['. It
// returns whether c is in the class, the index after the class, and
// whether the class is well formed (has a closing ']').
func matchClass(p string, i int, c byte) (ok bool, next int, valid bool) {
	j := i + 1
	negate := false
	if j < len(p) && p[j] == '!' {
		negate = true
		j++
	}
	first := true
	for j < len(p) {
		if p[j] == ']' && !first {
			return ok != negate, j + 1, true
		}
		first = false
		lo := p[j]
		if lo == '\\' && j+1 < len(p) {
			j++
			lo = p[j]
		}
		hi := lo
		if j+2 < len(p) && p[j+1] == '-' && p[j+2] != ']' {
			hi = p[j+2]
			if hi == '\\' && j+3 < len(p) {
				j++
				hi = p[j+2]
			}
			j += 2
		}
		if lo <= c && c <= hi {
			ok = true
		}
		j++
	}
	return false, 0, false
}

// SplitPIDGlob splits a provider field made of a glob and a process id,
// such as "p*d1234" (dtrace reads trailing digits after a pattern as the
// process whose pid and USDT providers the pattern chooses from): the
// pattern and the pid, when the pattern has a glob character and the
// process exists.
func SplitPIDGlob(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(s) || s[i] == '0' || !HasGlob(s[:i]) {
		return "", 0, false
	}
	p, err := strconv.Atoi(s[i:])
	if err != nil || p <= 0 || p > 1<<22 {
		return "", 0, false
	}
	if _, err := os.Stat("/proc/" + s[i:]); err != nil {
		return "", 0, false
	}
	return s[:i], p, true
}
