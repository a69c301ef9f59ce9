package main

import (
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

// usageText is dtrace(1M)'s usage message; %s is the program name.
const usageText = `Usage: %s [-32|-64] [-CeFGhHlqSvVwZ] [-b bufsz] [-c cmd] [-D name[=def]]
	[-I path] [-L path] [-o output] [-p pid] [-s script] [-U name]
	[-x opt[=val]] [-X a|c|s|t]

	[-P provider [[ predicate ] action ]]
	[-m [ provider: ] module [[ predicate ] action ]]
	[-f [[ provider: ] module: ] func [[ predicate ] action ]]
	[-n [[[ provider: ] module: ] func: ] name [[ predicate ] action ]]
	[-i probe-id [[ predicate ] action ]] [ args ... ]

	predicate -> '/' D-expression '/'
	   action -> '{' D-statements '}'

	-32 generate 32-bit D programs and ELF files
	-64 generate 64-bit D programs and ELF files

	-b  set trace buffer size
	-c  run specified command and exit upon its completion
	-C  run cpp(1) preprocessor on script files
	-D  define symbol when invoking preprocessor
	-e  exit after compiling request but prior to enabling probes
	-f  enable or list probes matching the specified function name
	-F  coalesce trace output by function
	-G  generate an ELF file containing embedded dtrace program
	-h  generate a header file with definitions for static probes
	-H  print included files when invoking preprocessor
	-i  enable or list probes matching the specified probe id
	-I  add include directory to preprocessor search path
	-l  list probes matching specified criteria
	-L  add library directory to library search path
	-m  enable or list probes matching the specified module name
	-n  enable or list probes matching the specified probe name
	-o  set output file
	-p  grab specified process-ID and cache its symbol tables
	-P  enable or list probes matching the specified provider name
	-q  set quiet mode (only output explicitly traced data)
	-s  enable or list probes according to the specified D script
	-S  print D compiler intermediate code
	-U  undefine symbol when invoking preprocessor
	-v  set verbose mode (report stability attributes, arguments)
	-V  report DTrace API version
	-w  permit destructive actions
	-x  enable or modify compiler and tracing options
	-X  specify ISO C conformance settings for preprocessor
	-Z  permit probe descriptions that match zero probes

	Beyond dtrace(1M) (README, "Flight recorder"): -x bufpolicy=ring keeps
	the newest records of each CPU and prints them in time order at exit;
	snapshot() or snapshot(n) in a clause (at most n times in the run) and
	kill -USR1 <dtrace pid> write what the buffers hold now, after a
	header line, and tracing goes on; traceoff() or traceoff(n) (at most n
	times) stops recording into the buffers and traceon() starts it again,
	without detaching probes (aggregations keep counting).

	Guests (README, "Guests"): -x agent=/dev/virtio-ports/NAME in a guest
	serves the host; -x guest=NAME=SOCKET (repeatable) on the host runs the
	programs in that guest too, output in one stream by machine.
`
