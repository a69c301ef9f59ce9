//go:build linux

package dtrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/consumer"
)

// openTest opens a handle for a test, or skips without root.
func openTest(t *testing.T, conf Config) *Handle {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if conf.Stderr == nil {
		conf.Stderr = io.Discard
	}
	h, err := Open(NewOptions(), conf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// startTest compiles the program src (named name) on h and starts
// tracing it.
func startTest(t *testing.T, h *Handle, name, src string) {
	t.Helper()
	if _, err := h.Compile(Source{Name: name, Text: src}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
}

// runOK runs h to the end and returns what it printed; it fails unless
// the exit status is 0.
func runOK(t *testing.T, h *Handle) string {
	t.Helper()
	var out bytes.Buffer
	if status, err := h.Run(&out, RunConfig{}); err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	return out.String()
}

// TestRunInterrupt: the first interrupt stops tracing (END runs), then
// the closing newline and the aggregations follow; in testing mode no
// newline marks the interrupt.
func TestRunInterrupt(t *testing.T) {
	h := openTest(t, Config{Testing: true})
	h.opts.Quiet = true
	if _, err := h.Compile(Source{Name: "t", Text: `BEGIN { @ = count(); } END { printf("end\n"); }`}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	var out bytes.Buffer
	status, err := h.Run(&out, RunConfig{Interrupt: sigs})
	if err != nil || status != 0 {
		t.Fatalf("Run: %d, %v", status, err)
	}
	if want := "end\n\n                1\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

// TestGoInterrupted: a stop request while probes attach ends GoContext
// with ErrInterrupted, and Run still gets that request.
func TestGoInterrupted(t *testing.T) {
	h := openTest(t, Config{Testing: true})
	if _, err := h.Compile(Source{Name: "t", Text: `tick-1s { @ = count(); } tick-2s { @ = count(); }`}); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	rc := RunConfig{Interrupt: sigs}
	ctx := EnablingContext(&rc)
	if ctx.Err() != nil {
		t.Fatal("the context ended before any request")
	}
	sigs <- syscall.SIGINT
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a stop request did not end the context")
	}
	if err := h.GoContext(ctx); !errors.Is(err, ErrInterrupted) {
		t.Errorf("GoContext = %v, want %v", err, ErrInterrupted)
	}
	select {
	case s := <-rc.Interrupt:
		if s != syscall.SIGINT {
			t.Errorf("Run's channel got %v, want SIGINT", s)
		}
	case <-time.After(5 * time.Second):
		t.Error("the request did not reach Run's channel")
	}
}

// TestRunProcesses: tracing stops once the created process has exited,
// and $target is its pid.
func TestRunProcesses(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	p, err := CreateProcess([]string{"/bin/true"}, nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Abandon()
	h := openTest(t, Config{Target: p.Pid()})
	h.opts.Quiet = true
	if _, err := h.Compile(Source{Name: "t", Text: `BEGIN { printf("%d\n", $target == ` + strconv.Itoa(p.Pid()) + `); }`}); err != nil {
		t.Fatal(err)
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := h.Run(&out, RunConfig{Processes: []*Process{p}}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "1\n\n" {
		t.Errorf("output %q, want %q", out.String(), "1\n\n")
	}
}

// TestWriteList lists what a program matches, with -v's detail, and the
// stability report of a compiled program.
func TestWriteList(t *testing.T) {
	h := openTest(t, Config{})
	p, err := h.Compile(Source{Name: "BEGIN,END {}", Text: "BEGIN,END {}", Kind: SpecName})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteListHeader(&b)
	if _, err := h.WriteList(&b, p, false); err != nil {
		t.Fatal(err)
	}
	want := "   ID   PROVIDER            MODULE                          FUNCTION NAME\n" +
		"    1     dtrace                                                     BEGIN\n" +
		"    2     dtrace                                                     END\n"
	if b.String() != want {
		t.Errorf("list\n%q, want\n%q", b.String(), want)
	}
	b.Reset()
	p.WriteStability(&b, false)
	if s := b.String(); !strings.HasPrefix(s, "\nStability attributes for description BEGIN,END :\n") ||
		!strings.HasSuffix(s, "\nBEGIN\n\nEND\n") {
		t.Errorf("stability report %q", s)
	}
}

// TestBufResize: where the kernel cannot give bufsize, bufresize=auto
// halves it until it can and says so; manual fails in dtrace's words.
func TestBufResize(t *testing.T) {
	real := openPerfBuffers
	defer func() { openPerfBuffers = real }()
	openPerfBuffers = func(m *ebpf.Map, o consumer.BufferOptions) (*consumer.Buffers, error) {
		if o.Size > 64<<10 {
			return nil, fmt.Errorf("mmap: %w", unix.ENOMEM)
		}
		return real(m, o)
	}
	for _, resize := range []string{"auto", "manual"} {
		var stderr bytes.Buffer
		h := openTest(t, Config{Testing: true, Stderr: &stderr})
		h.opts.Quiet = true
		if err := h.opts.SetArg("bufsize=1m"); err != nil {
			t.Fatal(err)
		}
		if err := h.opts.SetArg("bufresize=" + resize); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Compile(Source{Name: "t", Text: `BEGIN { printf("hi\n"); exit(0); }`}); err != nil {
			t.Fatal(err)
		}
		err := h.Go()
		if resize == "manual" {
			if err == nil || err.Error() != "Cannot allocate memory" {
				t.Errorf("manual: Go gave %v, want Cannot allocate memory", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("auto: %v", err)
		}
		var out bytes.Buffer
		if _, err := h.Run(&out, RunConfig{}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "hi\n\n" || stderr.String() != "dtrace: buffer size lowered to 64k\n" || h.opts.BufSize != 64<<10 {
			t.Errorf("auto: output %q, stderr %q, bufsize %d", out.String(), stderr.String(), h.opts.BufSize)
		}
	}
}
