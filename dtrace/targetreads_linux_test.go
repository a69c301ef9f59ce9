//go:build linux

package dtrace

import (
	"bytes"
	"io"
	"os/exec"
	"testing"

	"github.com/dtrace-go/dtrace/symbol"
)

// TestTargetReads: with a -p or -c process, what a program costs at
// start-up follows what it uses. A program whose descriptions can name
// no pid or USDT probe and that names no user address reads nothing of
// the process (its mappings, its environment, /etc/ld.so.conf); one that
// may name the target's USDT probes (tick-1ms: an empty provider field)
// or names its pid probes reads each once for the whole program, however
// many descriptions and clauses there are.
func TestTargetReads(t *testing.T) {
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleep.Process.Kill(); _ = sleep.Wait() }()
	for _, tc := range []struct {
		name, src string
		create    bool  // -c /bin/true, else -p of sleep
		most      int64 // reads of each kind allowed (-1: any)
		leastMaps int64 // reads of the maps wanted
	}{
		{"p-begin", `BEGIN { exit(0); } END { } ERROR { }`, false, 0, 0},
		{"c-begin", `BEGIN { } END { }`, true, 0, 0},
		{"p-tick", `tick-1ms { exit(0); } tick-2ms { } BEGIN { }`, false, 1, 0},
		{"p-pid", `pid$target::nanosleep:entry, pid$target::nanosleep:return { } tick-1ms { exit(0); } tick-2ms { } BEGIN { }`, false, 1, 1},
		{"c-pid", `pid$target:libc.so.6:malloc:entry { } pid$target:libc.so.6:free:entry { } BEGIN { }`, true, 1, 1},
		// A program that names user addresses (%A here) still
		// snapshots the target, and follows it.
		{"p-uaddr", `BEGIN { printf("%A", 0); exit(0); }`, false, -1, 1},
		{"c-ustack", `BEGIN { ustack(); }`, true, -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ps []*Process
			var p *Process
			if tc.create {
				var err error
				if p, err = CreateProcess([]string{"/bin/true"}, nil, io.Discard, io.Discard); err != nil {
					t.Fatal(err)
				}
				defer p.Abandon()
				ps = []*Process{p}
			} else {
				var err error
				if p, err = GrabProcess(sleep.Process.Pid); err != nil {
					t.Fatal(err)
				}
			}
			before := symbol.ProcessReads()
			h := openTest(t, Config{Target: p.Pid()})
			h.opts.Quiet = true
			startTest(t, h, tc.name, tc.src)
			var out bytes.Buffer
			if _, err := h.Run(&out, RunConfig{Processes: ps}); err != nil {
				t.Fatal(err)
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
			r := symbol.ProcessReads()
			maps, env, conf := r.Maps-before.Maps, r.Environ-before.Environ, r.LdSoConf-before.LdSoConf
			if tc.most >= 0 && (maps > tc.most || env > tc.most || conf > tc.most) {
				t.Errorf("read the target's maps %d times, its environment %d, /etc/ld.so.conf %d; want at most %d each", maps, env, conf, tc.most)
			}
			if maps < tc.leastMaps {
				t.Errorf("read the target's maps %d times, want at least %d", maps, tc.leastMaps)
			}
		})
	}
}
