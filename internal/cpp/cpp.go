// Package cpp runs the system C preprocessor over D programs, as dtrace -C
// does: it builds cpp's command line (dtrace's predefined macros, -D/-U/-I
// from the command line and options, the -X/stdc mode), feeds the program on
// standard input so that cpp names it "/dev/stdin" in its messages, and
// turns cpp's line markers into a line map so that compile errors still
// point at lines of the original script.
package cpp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Errors with libdtrace's texts; the command prints them after
// "failed to compile script NAME: ".
var (
	// ErrFailed means cpp ran and reported errors (already written to the
	// caller's stderr).
	ErrFailed = errors.New("Preprocessor failed to process input program")
	// ErrNotFound means the preprocessor program does not exist.
	ErrNotFound = errors.New("Preprocessor not found")
	// ErrExec means the preprocessor could not be executed.
	ErrExec = errors.New("Failed to exec preprocessor")
)

// Config says how to run the preprocessor.
type Config struct {
	// Path is the preprocessor (option cpppath); default "/usr/bin/cpp".
	Path string
	// Args are the user's arguments in order: -D, -U, -I, -H and the words
	// of -xcppargs (dtrace.Options.CPPArgs).
	Args []string
	// Stdc is the -X mode: "a", "c", "t" run cpp as ISO C (-std=c99),
	// "s" as K&R (-traditional-cpp).
	Stdc string
	// Version is __SUNW_D_VERSION (major<<24 | minor<<12 | micro).
	Version uint32
	// Dir is cpp's working directory ("" = ours), for relative -I paths.
	Dir string
}

// Predefined returns the macro arguments dtrace passes before the user's:
// the platform macros of libdtrace on Linux.
func Predefined() []string {
	args := []string{
		"-D__linux", "-D__unix", "-D__SVR4", "-D__SUNW_D=1", "-U__GNUC__",
		"-D__SUNW_D_64", "-D__Linux",
	}
	switch runtime.GOARCH {
	case "amd64":
		args = append(args, "-D__amd64")
	case "arm64":
		args = append(args, "-D__aarch64__")
	}
	return args
}

// Command returns the argument vector (argv[0] first) used to preprocess a
// program read from standard input and written to standard output.
func (c Config) Command() []string {
	path := c.Path
	if path == "" {
		path = "/usr/bin/cpp"
	}
	argv := []string{filepath.Base(path)}
	argv = append(argv, Predefined()...)
	argv = append(argv, c.Args...)
	argv = append(argv, fmt.Sprintf("-D__SUNW_D_VERSION=0x%08x", c.Version))
	switch c.Stdc {
	case "s":
		argv = append(argv, "-traditional-cpp")
	default:
		argv = append(argv, "-std=c99")
	}
	return append(argv, "/dev/stdin")
}

// Result is preprocessed D source.
type Result struct {
	// Text is the output with cpp's line markers removed. Blank lines are
	// inserted where possible so that line N of Text is line N of the
	// original program.
	Text string
	// Lines maps each line of Text (index 0 is line 1) to where it came
	// from. File is "" for the program itself.
	Lines []Origin
}

// Origin is the source of one output line.
type Origin struct {
	File string
	Line int
}

// Run preprocesses src. cpp's diagnostics go to stderr as they are, then
// Run returns ErrFailed. An interpreter line ("#!...") at the top is blanked
// first, as dtrace does, so that line numbers stay right.
func Run(ctx context.Context, c Config, src []byte, stderr io.Writer) (*Result, error) {
	argv := c.Command()
	path := c.Path
	if path == "" {
		path = "/usr/bin/cpp"
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = c.Dir
	cmd.Stdin = bytes.NewReader(StripInterpreter(src))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return nil, ErrFailed
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, syscall.ENOENT):
			return nil, ErrNotFound
		default:
			return nil, ErrExec
		}
	}
	return parseOutput(out.String()), nil
}

// StripInterpreter blanks a first line starting with "#!", keeping its
// newline so that the program's line numbers do not move.
func StripInterpreter(src []byte) []byte {
	if !bytes.HasPrefix(src, []byte("#!")) {
		return src
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		return src[i:]
	}
	return nil
}

// parseOutput removes GNU cpp line markers ("# 12 "file" flags") and
// realigns the text with the original program's lines.
func parseOutput(s string) *Result {
	r := &Result{}
	var b strings.Builder
	cur := Origin{File: "", Line: 1}
	mainName := ""
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if n, file, ok := lineMarker(line); ok {
			if mainName == "" {
				mainName = file
			}
			if file == mainName {
				file = ""
			}
			if file == "<built-in>" || file == "<command-line>" {
				continue
			}
			cur = Origin{File: file, Line: n}
			// Pad so that program lines stay on their own line numbers.
			if file == "" {
				for len(r.Lines)+1 < n {
					b.WriteByte('\n')
					r.Lines = append(r.Lines, Origin{Line: len(r.Lines) + 1})
				}
			}
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		r.Lines = append(r.Lines, cur)
		cur.Line++
	}
	r.Text = b.String()
	return r
}

// lineMarker recognizes `# N "file" ...` and `#line N "file"`.
func lineMarker(line string) (int, string, bool) {
	if !strings.HasPrefix(line, "#") {
		return 0, "", false
	}
	rest := strings.TrimLeft(line[1:], " \t")
	rest = strings.TrimPrefix(rest, "line")
	rest = strings.TrimLeft(rest, " \t")
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil {
		return 0, "", false
	}
	rest = strings.TrimLeft(rest[i:], " \t")
	file := ""
	if strings.HasPrefix(rest, `"`) {
		if j := strings.Index(rest[1:], `"`); j >= 0 {
			file = rest[1 : j+1]
		}
	}
	return n, file, true
}
