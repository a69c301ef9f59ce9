// Package cnum reads numbers as C's library does, for the values that
// libdtrace and elfutils parse that way (some dtrace options, debuginfod's
// environment variables).
package cnum

import (
	"strconv"
	"strings"
)

// Atol reads a decimal number as C's atol does: leading white space, a
// sign, digits, and whatever follows ignored (0 when there are no
// digits).
func Atol(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}
