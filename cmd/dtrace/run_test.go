package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dtrace"
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

// fakeEngine records what the command asks and answers from a script.
type fakeEngine struct {
	opts      *dtrace.Options
	compiled  []source
	compileFn func(source) error
	matches   int
	status    int
	output    string
	works     int
	goErr     error
}

func (f *fakeEngine) Compile(s source) (program, error) {
	f.compiled = append(f.compiled, s)
	if f.compileFn != nil {
		if err := f.compileFn(s); err != nil {
			return nil, err
		}
	}
	return len(f.compiled), nil
}
func (f *fakeEngine) Info(program) progInfo { return progInfo{Matches: f.matches} }
func (f *fakeEngine) Exec(program) (progInfo, error) {
	return progInfo{Matches: f.matches, DescAttr: attr{"Unstable", "Unstable", "Common"}, StmtAttr: attr{"Stable", "Stable", "Common"}}, nil
}
func (f *fakeEngine) List(program) ([]probeDesc, error) {
	return []probeDesc{{ID: 1, Provider: "dtrace", Name: "BEGIN"}}, nil
}
func (f *fakeEngine) Go() error { return f.goErr }
func (f *fakeEngine) Work(w io.Writer) (bool, error) {
	f.works++
	io.WriteString(w, f.output)
	return true, nil
}
func (f *fakeEngine) Stop() error     { return nil }
func (f *fakeEngine) ExitStatus() int { return f.status }
func (f *fakeEngine) Close() error    { return nil }

func withFake(t *testing.T, f *fakeEngine) {
	t.Helper()
	oldOpen, oldPriv, oldEnv := openEngine, checkPrivileges, environ
	openEngine = func(o *dtrace.Options, cfg engineConfig) (engine, error) {
		f.opts = o
		return f, nil
	}
	checkPrivileges = func() error { return nil }
	environ = func() []string { return nil }
	t.Cleanup(func() { openEngine, checkPrivileges, environ = oldOpen, oldPriv, oldEnv })
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "x.d")
	if err := os.WriteFile(script, []byte("#!/usr/sbin/dtrace -s\nBEGIN { exit(3); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cppScript := filepath.Join(dir, "c.d")
	if err := os.WriteFile(cppScript, []byte("#ifdef __linux\nVALUE\n#endif\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		engine fakeEngine
		status int
		stdout string
		stderr string // substring
		check  func(t *testing.T, f *fakeEngine)
	}{
		{name: "no args", args: nil, status: 2, stderr: "Usage: dtrace [-32|-64]"},
		{name: "bad option", args: []string{"-k"}, status: 2, stderr: "dtrace: invalid option -- 'k'\nUsage:"},
		{name: "version", args: []string{"-V"}, stdout: "dtrace: Oracle D 2.0\n"},
		{name: "two modes", args: []string{"-l", "-V"}, status: 2, stderr: "only one of the [-GhlV] options"},
		{name: "description", args: []string{"-n", "BEGIN { exit(0); }"}, engine: fakeEngine{matches: 1},
			stdout: "\n", stderr: "dtrace: description 'BEGIN ' matched 1 probe\n"},
		{name: "script exit status", args: []string{"-s", script, "a1"}, engine: fakeEngine{matches: 2, status: 3, output: "out\n"},
			status: 3, stdout: "out\n\n", stderr: "dtrace: script '" + script + "' matched 2 probes\n",
			check: func(t *testing.T, f *fakeEngine) {
				s := f.compiled[0]
				if s.Text != "\nBEGIN { exit(3); }\n" || !s.IsFile || !reflect.DeepEqual(s.Args, []string{script, "a1"}) {
					t.Errorf("compiled %+v", s)
				}
			}},
		{name: "quiet", args: []string{"-q", "-n", "BEGIN"}, engine: fakeEngine{matches: 1}, stdout: "\n"},
		{name: "compile error", args: []string{"-s", script},
			engine: fakeEngine{compileFn: func(source) error { return errors.New("line 2: syntax error near \"}\"") }},
			status: 1, stderr: "dtrace: failed to compile script " + script + ": line 2: syntax error near \"}\"\n"},
		{name: "bad specifier", args: []string{"-n", "BEGIN {"},
			engine: fakeEngine{compileFn: func(source) error { return errors.New("syntax error near end-of-input") }},
			status: 1, stderr: "dtrace: invalid probe specifier BEGIN {: syntax error near end-of-input\n"},
		{name: "no probes", args: []string{"-n", "nope:::"}, engine: fakeEngine{matches: 0},
			status: 1, stderr: "dtrace: description 'nope:::' matched 0 probes\ndtrace: no probes matched\n"},
		{name: "zero ok with -Z", args: []string{"-Z", "-n", "nope:::"}, engine: fakeEngine{matches: 0}, stdout: "\n",
			stderr: "dtrace: description 'nope:::' matched 0 probes\n"},
		{name: "compile only", args: []string{"-e", "-n", "BEGIN"}, engine: fakeEngine{matches: 1},
			check: func(t *testing.T, f *fakeEngine) {
				if f.works != 0 {
					t.Errorf("-e traced")
				}
			}},
		{name: "bad -x", args: []string{"-xstdc=X", "-n", "BEGIN"}, status: 1, stderr: "dtrace: failed to set -x stdc: Invalid value for specified option\n"},
		{name: "bad -b", args: []string{"-b", "-1", "-n", "BEGIN"}, status: 1, stderr: "dtrace: failed to set -b -1: Invalid value for specified option\n"},
		{name: "missing script", args: []string{"-s", filepath.Join(dir, "wassup")}, status: 1,
			stderr: "dtrace: failed to open " + filepath.Join(dir, "wassup") + ": No such file or directory\n"},
		{name: "go fails", args: []string{"-n", "BEGIN"}, engine: fakeEngine{matches: 1, goErr: errors.New("Destructive actions not allowed")},
			status: 1, stderr: "dtrace: could not enable tracing: Destructive actions not allowed\n"},
		{name: "list", args: []string{"-l", "-n", "BEGIN"}, engine: fakeEngine{},
			stdout: "   ID   PROVIDER            MODULE                          FUNCTION NAME\n    1     dtrace                                                     BEGIN\n"},
		{name: "cpp", args: []string{"-C", "-DVALUE=7", "-s", cppScript}, engine: fakeEngine{matches: 1}, stdout: "\n",
			stderr: "matched 1 probe\n",
			check: func(t *testing.T, f *fakeEngine) {
				if !strings.Contains(f.compiled[0].Text, "\n7\n") {
					t.Errorf("preprocessed text %q", f.compiled[0].Text)
				}
			}},
		{name: "verbose", args: []string{"-v", "-n", "BEGIN"}, engine: fakeEngine{matches: 1},
			stdout: "\nStability attributes for description BEGIN:\n\n\tMinimum Probe Description Attributes\n",
			stderr: "dtrace: description 'BEGIN' matched 1 probe\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.engine
			withFake(t, &f)
			var stdout, stderr bytes.Buffer
			status := run(append([]string{"dtrace"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if status != tt.status {
				t.Errorf("status %d, want %d (stderr %q)", status, tt.status, stderr.String())
			}
			if tt.stdout != "" && !strings.HasPrefix(stdout.String(), tt.stdout) || tt.stdout == "" && stdout.Len() != 0 {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) || tt.stderr == "" && stderr.Len() != 0 {
				t.Errorf("stderr %q, want %q", stderr.String(), tt.stderr)
			}
			if tt.check != nil {
				tt.check(t, &f)
			}
		})
	}
}

func TestCreateProcess(t *testing.T) {
	v, err := createProcess("/bin/true", nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if v.pid <= 0 {
		t.Fatalf("pid %d", v.pid)
	}
	select {
	case <-v.exited:
		t.Fatal("process ran before release")
	default:
	}
	v.continueProcess()
	<-v.exited

	if _, err := createProcess("/nonexistent/prog", nil, io.Discard, io.Discard); err == nil ||
		err.Error() != "failed to execute /nonexistent/prog: No such file or directory" {
		t.Errorf("err = %v", err)
	}
	if _, err := grabProcess("abc"); err == nil || err.Error() != "invalid pid: abc" {
		t.Errorf("err = %v", err)
	}
}
