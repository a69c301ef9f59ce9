package cpp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string // must appear, in this order
		not  []string
	}{
		{Config{Args: []string{"-Dprobe=BEGIN", "-U__linux"}, Version: 0x02000000},
			[]string{"cpp", "-D__linux", "-D__SUNW_D=1", "-Dprobe=BEGIN", "-U__linux", "-D__SUNW_D_VERSION=0x02000000", "-std=c99", "/dev/stdin"}, nil},
		{Config{Path: "/usr/local/bin/mycpp", Stdc: "s"},
			[]string{"mycpp", "-traditional-cpp", "/dev/stdin"}, []string{"-std=c99"}},
	}
	for _, tt := range tests {
		got := tt.cfg.Command()
		i := 0
		for _, a := range got {
			if i < len(tt.want) && a == tt.want[i] {
				i++
			}
		}
		if i != len(tt.want) {
			t.Errorf("Command() = %q, want in order %q", got, tt.want)
		}
		for _, n := range tt.not {
			for _, a := range got {
				if a == n {
					t.Errorf("Command() = %q contains %q", got, n)
				}
			}
		}
	}
}

func TestParseOutput(t *testing.T) {
	out := "# 0 \"/dev/stdin\"\n# 0 \"<built-in>\"\n# 0 \"<command-line>\"\n# 1 \"/dev/stdin\"\n\n" +
		"BEGIN\n# 20 \"/dev/stdin\"\n{ x; }\n# 1 \"inc.h\" 1\nint y;\n# 22 \"/dev/stdin\" 2\nEND\n"
	r := parseOutput(out)
	lines := strings.Split(strings.TrimSuffix(r.Text, "\n"), "\n")
	if lines[1] != "BEGIN" || lines[19] != "{ x; }" {
		t.Errorf("lines not realigned: %q", lines)
	}
	if len(r.Lines) != len(lines) {
		t.Fatalf("%d origins for %d lines", len(r.Lines), len(lines))
	}
	if o := r.Lines[20]; o.File != "inc.h" || o.Line != 1 {
		t.Errorf("included line origin = %+v", o)
	}
	if o := r.Lines[len(lines)-1]; o.File != "" || o.Line != 22 {
		t.Errorf("END origin = %+v", o)
	}
}

func TestStripInterpreter(t *testing.T) {
	got := string(StripInterpreter([]byte("#!/usr/sbin/dtrace -s\nBEGIN\n")))
	if got != "\nBEGIN\n" {
		t.Errorf("StripInterpreter = %q", got)
	}
}

func TestRun(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/cpp"); err != nil {
		t.Skip("no /usr/bin/cpp on this machine")
	}
	ctx := context.Background()
	var stderr bytes.Buffer
	src := "#!/usr/sbin/dtrace -Cs\n#ifdef __linux\nBEGIN { exit(VALUE); }\n#endif\n"
	r, err := Run(ctx, Config{Args: []string{"-DVALUE=3"}, Version: 0x02000000}, []byte(src), &stderr)
	if err != nil {
		t.Fatalf("Run: %v (%s)", err, stderr.String())
	}
	lines := strings.Split(r.Text, "\n")
	if len(lines) < 3 || lines[2] != "BEGIN { exit(3); }" {
		t.Errorf("output %q", r.Text)
	}

	stderr.Reset()
	_, err = Run(ctx, Config{Args: []string{"-fno-show-column"}}, []byte("\n#else\n"), &stderr)
	if !errors.Is(err, ErrFailed) {
		t.Errorf("bad input: err = %v", err)
	}
	if !strings.Contains(stderr.String(), "/dev/stdin:2: error: #else without #if") {
		t.Errorf("stderr = %q", stderr.String())
	}

	_, err = Run(ctx, Config{Path: filepath.Join(t.TempDir(), "nocpp")}, []byte("x"), &stderr)
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("missing cpp: err = %v", err)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "D.h"), []byte("#define VALUE 40404\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = Run(ctx, Config{Args: []string{"-I" + dir}}, []byte("#include \"D.h\"\nVALUE\n"), &stderr)
	if err != nil || !strings.Contains(r.Text, "40404") {
		t.Errorf("include: %v %+v", err, r)
	}
}
