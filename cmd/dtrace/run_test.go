package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/lockedbuf"
)

func TestParseArgs(t *testing.T) {
	tests := []struct {
		args     string
		opts     []opt
		operands []string
		err      string
	}{
		{"dtrace -n BEGIN", []opt{{'n', "BEGIN"}}, nil, ""},
		{"dtrace -qs x.d a b", []opt{{'q', ""}, {'s', "x.d"}}, []string{"a", "b"}, ""},
		{"dtrace -s x.d 1 -q 2", []opt{{'s', "x.d"}, {'q', ""}}, []string{"1", "2"}, ""},
		{"dtrace -xbufsize=4m -b64 -Dfoo", []opt{{'x', "bufsize=4m"}, {'b', "64"}, {'D', "foo"}}, nil, ""},
		{"dtrace -s x.d -- -e -e", []opt{{'s', "x.d"}, {'e', ""}}, []string{"-e"}, ""},
		{"dtrace -32 -n BEGIN", []opt{{'3', "2"}, {'n', "BEGIN"}}, nil, ""},
		{"dtrace -k", nil, nil, "invalid option -- 'k'"},
		{"dtrace -n", nil, nil, "option requires an argument -- 'n'"},
		{"dtrace - x", nil, []string{"-", "x"}, ""},
	}
	for _, tt := range tests {
		opts, operands, err := parseArgs(strings.Fields(tt.args))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q: err %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(opts, tt.opts) || !reflect.DeepEqual(operands, tt.operands) {
			t.Errorf("%q: got %v %q %v, want %v %q", tt.args, opts, operands, err, tt.opts, tt.operands)
		}
	}
}

// TestRun runs the command in this process. Cases that compile or trace
// use the library and the kernel, so they need root; the others check
// what the command does on its own.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// The interpreter line is blanked, not removed: the error is on line 3.
	script := write("x.d", "#!/usr/sbin/dtrace -s\nBEGIN { printf(\"%s\\n\", $$1); exit(3); }\n")
	bad := write("bad.d", "#!/usr/sbin/dtrace -s\nBEGIN { exit(0) }\n}\n")
	decl := write("decl.d", "int x;\n")
	cppScript := write("c.d", "#ifdef __linux\nBEGIN { printf(\"%d\\n\", VALUE); exit(0); }\n#endif\n")
	ofile := filepath.Join(dir, "out")
	tests := []struct {
		name   string
		args   []string
		root   bool // needs the kernel
		status int
		stdout string // prefix
		stderr string // substring; "" wants none
		file   string // what -o wrote
	}{
		{name: "no args", args: nil, status: 2, stderr: "Usage: dtrace [-32|-64]"},
		{name: "bad option", args: []string{"-k"}, status: 2, stderr: "dtrace: invalid option -- 'k'\nUsage:"},
		{name: "bad -32", args: []string{"-31", "-n", "BEGIN"}, status: 2, stderr: "dtrace: illegal option -- 31\nUsage:"},
		{name: "version", args: []string{"-V"}, stdout: "dtrace: Oracle D 2.0\n"},
		{name: "two modes", args: []string{"-l", "-V"}, status: 2, stderr: "only one of the [-GhlV] options"},
		{name: "bad -x", args: []string{"-xstdc=X", "-n", "BEGIN"}, status: 1, stderr: "dtrace: failed to set -x stdc: Invalid value for specified option\n"},
		{name: "bad -b", args: []string{"-b", "-1", "-n", "BEGIN"}, status: 1, stderr: "dtrace: failed to set -b -1: Invalid value for specified option\n"},
		{name: "-B -o", args: []string{"-B", "-o", "x", "-n", "BEGIN"}, status: 2, stderr: "dtrace: -B not valid in combination with -o option\n"},
		{name: "-h without scripts", args: []string{"-h", "-n", "BEGIN"}, status: 2, stderr: "dtrace: -h requires scripts (-s) holding provider definitions\n"},
		{name: "description", args: []string{"-n", "BEGIN { exit(0); }"}, root: true,
			stdout: "CPU     ID                    FUNCTION:NAME\n", stderr: "dtrace: description 'BEGIN ' matched 1 probe\n"},
		{name: "script exit status", args: []string{"-s", script, "a1"}, root: true,
			status: 3, stdout: "CPU", stderr: "dtrace: script '" + script + "' matched 1 probe\n"},
		{name: "quiet", args: []string{"-q", "-s", script, "a1"}, root: true, status: 3, stdout: "a1\n\n"},
		{name: "compile error", args: []string{"-s", bad}, root: true,
			status: 1, stderr: "dtrace: failed to compile script " + bad + ": line 3: syntax error near \"}\"\n"},
		{name: "bad specifier", args: []string{"-n", "BEGIN {"}, root: true,
			status: 1, stderr: "dtrace: invalid probe specifier BEGIN {: syntax error near end of input\n"},
		{name: "no probes", args: []string{"-s", decl}, root: true,
			status: 1, stderr: "dtrace: script '" + decl + "' matched 0 probes\ndtrace: no probes matched\n"},
		{name: "compile only", args: []string{"-e", "-n", "BEGIN"}, root: true},
		{name: "Solaris option", args: []string{"-x", "zone=global", "-e", "-n", "BEGIN"}, root: true,
			stderr: "dtrace: option zone only has meaning on Solaris and is ignored\n"},
		{name: "Solaris pragma", args: []string{"-e", "-s", write("z.d", "#pragma D option pgmax=4\nBEGIN {}\n")}, root: true,
			stderr: "dtrace: option pgmax only has meaning on Solaris and is ignored\n"},
		{name: "unsupported option", args: []string{"-x", "sysslice=dtrace.slice", "-e", "-n", "BEGIN"}, root: true,
			stderr: "dtrace: option sysslice is not supported and is ignored\n"},
		{name: "unsupported pragma", args: []string{"-e", "-s", write("u.d", "#pragma D option jstackframes=4\nBEGIN {}\n")}, root: true,
			stderr: "dtrace: option jstackframes is not supported and is ignored\n"},
		{name: "grabanon", args: []string{"-x", "grabanon", "-e", "-n", "BEGIN"}, root: true,
			stderr: "dtrace: option grabanon only has meaning on Solaris and is ignored\n"},
		{name: "nolibs", args: []string{"-x", "nolibs", "-e", "-n", "BEGIN { trace(curpsinfo->pr_pid); }"}, root: true, status: 1,
			stderr: "dtrace: invalid probe specifier BEGIN { trace(curpsinfo->pr_pid); }: failed to resolve curpsinfo: Unknown variable name\n"},
		{name: "libs", args: []string{"-e", "-n", "BEGIN { trace(curpsinfo->pr_pid); }"}, root: true},
		{name: "missing script", args: []string{"-s", filepath.Join(dir, "wassup")}, root: true, status: 1,
			stderr: "dtrace: failed to open " + filepath.Join(dir, "wassup") + ": No such file or directory\n"},
		{name: "go fails", args: []string{"-n", "BEGIN { system(\"x\"); }"}, root: true,
			status: 1, stderr: "dtrace: could not enable tracing: Destructive actions not allowed\n"},
		{name: "list", args: []string{"-l", "-n", "BEGIN"}, root: true,
			stdout: "   ID   PROVIDER            MODULE                          FUNCTION NAME\n    1     dtrace                                                     BEGIN\n"},
		{name: "list -v", args: []string{"-lv", "-n", "BEGIN"}, root: true,
			stdout: "   ID   PROVIDER            MODULE                          FUNCTION NAME\n    1     dtrace                                                     BEGIN\n\n\tProbe Description Attributes\n\t\tIdentifier Names: Stable\n"},
		{name: "cpp", args: []string{"-q", "-C", "-DVALUE=7", "-s", cppScript}, root: true, stdout: "7\n\n"},
		{name: "verbose", args: []string{"-v", "-e", "-n", "BEGIN"}, root: true,
			stdout: "\nStability attributes for description BEGIN:\n\n\tMinimum Probe Description Attributes\n"},
		{name: "-o", args: []string{"-o", ofile, "-qn", "BEGIN { printf(\"hi\\n\"); exit(0); }"}, root: true, file: "hi\n\n"},
		{name: "-c", args: []string{"-qn", "BEGIN { printf(\"%d\\n\", $target > 0); }", "-c", "/bin/true"}, root: true, stdout: "1\n\n"},
		{name: "bad -c", args: []string{"-qn", "BEGIN", "-c", "/nonexistent/prog"}, root: true,
			status: 1, stderr: "dtrace: failed to execute /nonexistent/prog: No such file or directory\n"},
		{name: "bad -p", args: []string{"-qn", "BEGIN", "-p", "abc"}, root: true, status: 1, stderr: "dtrace: invalid pid: abc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Getuid() != 0 {
				t.Skip("needs root for BPF")
			}
			os.Remove(ofile)
			// A -c child writes to the same streams from exec's copying
			// goroutine, so they must take concurrent writes.
			var stdout, stderr lockedbuf.Buffer
			status := run(append([]string{"dtrace"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if status != tt.status {
				t.Errorf("status %d, want %d (stderr %q)", status, tt.status, stderr.String())
			}
			if tt.stdout != "" && !strings.HasPrefix(stdout.String(), tt.stdout) || tt.stdout == "" && stdout.Len() != 0 {
				t.Errorf("stdout %q, want %q (stderr %q)", stdout.String(), tt.stdout, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) || tt.stderr == "" && stderr.Len() != 0 {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
			if tt.file != "" {
				if got, err := os.ReadFile(ofile); err != nil || string(got) != tt.file {
					t.Errorf("-o file %q (%v), want %q", got, err, tt.file)
				}
			}
		})
	}
}
