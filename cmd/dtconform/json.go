package main

// With -oformat json, dtconform runs the corpus through a wrapper that
// adds -x oformat=json to every dtrace invocation that traces, keeps what
// dtrace prints on standard output, and afterwards checks every line
// against the JSON Lines schema (docs/oformat-json.schema.json). The
// expected outputs are text, so verdicts are not judged in this mode:
// what is judged is that each object any corpus program makes is one the
// schema accepts.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The wrapper is dtconform itself, linked as "dtrace"; these variables
// tell it the dtrace binary it runs and the directory it keeps runs in.
const (
	envJSONDTrace = "DTCONFORM_JSON_DTRACE"
	envJSONLog    = "DTCONFORM_JSON_LOG"
)

// dtraceOptString is dtrace's getopt string (cmd/dtrace's optString).
const dtraceOptString = "3:6:aAb:Bc:CD:ef:FGhHi:I:lL:m:n:o:p:P:qs:SU:vVwx:X:Z"

// jsonWrapperMain runs the wrapper when this process is it, and does not
// return then.
func jsonWrapperMain() {
	real := os.Getenv(envJSONDTrace)
	if real == "" || filepath.Base(os.Args[0]) != "dtrace" {
		return
	}
	os.Exit(wrapDTrace(real, os.Getenv(envJSONLog), os.Args[1:]))
}

// jsonRun is what the wrapper keeps of one dtrace invocation.
type jsonRun struct {
	Test     string   `json:"test"`
	Args     []string `json:"args"`
	Signaled bool     `json:"signaled"` // killed: its last line may be cut
}

// traces reports whether a dtrace command line traces to standard
// output: not a listing, -V, -h, -G, -e, anonymous tracing or -o.
func traces(args []string) bool {
	return !strings.ContainsAny(optionLetters(args), "lVhGeaAo")
}

// optionLetters returns the option letters of a dtrace command line, as
// dtrace's getopt sees them.
func optionLetters(args []string) string {
	var letters []byte
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			letters = append(letters, c)
			k := strings.IndexByte(dtraceOptString, c)
			if k >= 0 && k+1 < len(dtraceOptString) && dtraceOptString[k+1] == ':' {
				if j+1 == len(a) {
					i++
				}
				break
			}
		}
	}
	return string(letters)
}

// wrapDTrace runs dtrace with -x oformat=json added where it traces,
// passing its streams, signals and exit status through, and keeps its
// standard output and command line in dir.
func wrapDTrace(real, dir string, args []string) int {
	if !traces(args) {
		return runPassing(exec.Command(real, args...), nil)
	}
	f, err := os.CreateTemp(dir, "run-*.out")
	if err != nil {
		fmt.Fprintln(os.Stderr, "dtconform wrapper:", err)
		return 2
	}
	defer f.Close()
	cmd := exec.Command(real, append([]string{"-x", "oformat=json"}, args...)...)
	status := runPassing(cmd, f)
	run := jsonRun{Test: os.Getenv("_test"), Args: args}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		run.Signaled = true
	}
	meta, _ := json.Marshal(run)
	if err := os.WriteFile(strings.TrimSuffix(f.Name(), ".out")+".meta", meta, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "dtconform wrapper:", err)
	}
	return status
}

// runPassing runs cmd with this process's standard streams, standard
// output also copied to keep when not nil, forwarding the signals tests
// send, and returns its exit status (128+signal when killed).
func runPassing(cmd *exec.Cmd, keep io.Writer) int {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if keep != nil {
		cmd.Stdout = io.MultiWriter(os.Stdout, keep)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "dtconform wrapper:", err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// jsonReport checks what the wrapper kept in dir against the schema at
// schemaPath, prints a summary and the invalid lines to w, and reports
// whether every line was valid.
func jsonReport(w io.Writer, dir, schemaPath string) (bool, error) {
	sch, err := compileSchema(schemaPath)
	if err != nil {
		return false, err
	}
	metas, err := filepath.Glob(filepath.Join(dir, "*.meta"))
	if err != nil {
		return false, err
	}
	sort.Strings(metas)
	runs, objects, childLines := 0, 0, 0
	kinds := map[string]int{}
	var bad []string
	for _, m := range metas {
		var run jsonRun
		b, err := os.ReadFile(m)
		if err != nil || json.Unmarshal(b, &run) != nil {
			return false, fmt.Errorf("%s: unreadable", m)
		}
		out, err := os.ReadFile(strings.TrimSuffix(m, ".meta") + ".out")
		if err != nil {
			return false, err
		}
		runs++
		test, _ := filepath.Rel(filepath.Dir(filepath.Dir(run.Test)), run.Test)
		lines := strings.Split(string(out), "\n")
		if last := len(lines) - 1; lines[last] == "" || run.Signaled {
			// Ended by a newline, or a killed run's last line, which
			// may be cut short.
			lines = lines[:last]
		}
		// What a -c command prints shares dtrace's standard output;
		// only lines that begin an object are dtrace's then.
		child := strings.ContainsRune(optionLetters(run.Args), 'c')
		for _, line := range lines {
			if child && !strings.HasPrefix(line, "{") {
				childLines++
				continue
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
			if err == nil {
				err = sch.Validate(inst)
			}
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s %q: line %.200q: %v", test, run.Args, line, err))
				continue
			}
			objects++
			if obj, ok := inst.(map[string]any); ok {
				if t, ok := obj["type"].(string); ok {
					kinds[t]++
				}
			}
		}
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(ks)
	for _, b := range bad {
		fmt.Fprintln(w, "invalid:", b)
	}
	fmt.Fprintf(w, "json: %d dtrace runs, %d objects valid (%s), %d lines invalid, %d lines of -c commands not checked\n",
		runs, objects, strings.Join(ks, ", "), len(bad), childLines)
	return len(bad) == 0, nil
}

// compileSchema compiles the JSON Schema at path.
func compileSchema(path string) (*jsonschema.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c := jsonschema.NewCompiler()
	name := filepath.Base(path)
	if err := c.AddResource(name, doc); err != nil {
		return nil, err
	}
	return c.Compile(name)
}
