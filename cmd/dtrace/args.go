package main

import (
	_ "embed"
	"fmt"
	"strings"
)

// optString is dtrace(1M)'s getopt string: a letter followed by ':' takes an
// argument. The leading '+' of the C version (stop at the first operand) is
// implied by parseArgs.
const optString = "3:6:aAb:Bc:CD:ef:FGhHi:I:lL:m:n:o:p:P:qs:SU:vVwx:X:Z"

// opt is one option from the command line, in order.
type opt struct {
	c   byte
	arg string
}

// usageError is a command-line error that ends with the usage message and
// exit status 2. msg (if any) is printed first, as glibc's getopt does.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs splits args (args[0] is the program name) into options and
// operands the way dtrace does: it runs getopt, and each time getopt stops
// at a non-option it records that word as an operand and resumes after it,
// so options and operands may be mixed. "--" ends one getopt run: the word
// after it is an operand and option parsing resumes after that word, exactly
// like the C loop around getopt.
func parseArgs(args []string) ([]opt, []string, error) {
	var opts []opt
	var operands []string
	i := 1
	for i < len(args) {
		// One getopt run.
		for i < len(args) {
			a := args[i]
			if a == "--" {
				i++
				break
			}
			if len(a) < 2 || a[0] != '-' {
				break
			}
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(optString, c)
				if c == ':' || k < 0 {
					return nil, nil, &usageError{fmt.Sprintf("invalid option -- '%c'", c)}
				}
				if takesArg(c) {
					switch {
					case j+1 < len(a):
						opts = append(opts, opt{c, a[j+1:]})
					case i+1 < len(args):
						i++
						opts = append(opts, opt{c, args[i]})
					default:
						return nil, nil, &usageError{fmt.Sprintf("option requires an argument -- '%c'", c)}
					}
					break
				}
				opts = append(opts, opt{c: c})
			}
			i++
		}
		if i < len(args) {
			operands = append(operands, args[i])
		}
		i++
	}
	return opts, operands, nil
}

// takesArg reports whether option letter c takes an argument.
func takesArg(c byte) bool {
	k := strings.IndexByte(optString, c)
	return k >= 0 && k+1 < len(optString) && optString[k+1] == ':'
}

// usageText is dtrace(1M)'s usage message, with what we add after it; %s
// is the program name.
//
//go:embed usage.txt
var usageText string
