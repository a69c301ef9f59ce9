package dtrace

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestTemporal: with the temporal option (here by pragma) the records of
// a probe firing on every CPU come out in time order over the whole run.
// The order is that of the kernel's stamp, taken when the record is
// written, which on a loaded virtual machine can trail the probe's
// timestamp by tens of microseconds; so a printed timestamp may precede
// the one before it by that much, never by the 100ms of a switch pass
// that CPU-by-CPU delivery gives.
func TestTemporal(t *testing.T) {
	h := openTest(t, Config{Testing: true})
	src := "#pragma D option quiet\n#pragma D option temporal\n#pragma D option switchrate=10hz\n" +
		`profile-997 { printf("%d %d\n", timestamp, cpu); } tick-1s { exit(0); }`
	if _, err := h.Compile(Source{Name: "t", Text: src}); err != nil {
		t.Fatal(err)
	}
	if !h.opts.Temporal {
		t.Fatal("#pragma D option temporal did not set the option")
	}
	if err := h.Go(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := h.Run(&out, RunConfig{}); err != nil {
		t.Fatal(err)
	}
	const within = 10_000_000 // 10ms
	var last uint64
	cpus := map[string]bool{}
	lines := 0
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		ts, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ts+within < last {
			t.Fatalf("timestamp %d after %d: not in time order", ts, last)
		}
		last = max(last, ts)
		cpus[f[1]] = true
		lines++
	}
	if lines < 100 {
		t.Fatalf("%d records, want about 1000 per CPU", lines)
	}
	if len(h.bufs.CPUs()) > 1 && len(cpus) < 2 {
		t.Errorf("records from CPUs %v only", cpus)
	}
}
