//go:build linux

package json

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtrace-go/dtrace/internal/testutil/outtest"
)

// programs are the D programs whose -x oformat=json output must follow
// the schema: between them they record every action that has an object
// of its own, faults, speculations, printa() and each aggregating
// function with keys of each kind.
var programs = []string{
	`syscall::getppid:entry /pid == $target/ { @[probefunc] = count(); }`,
	`pid$target:a.out:work:entry /arg0 == 3/ {
		printf("%s %d\n", probefunc, arg0); trace(arg0); trace("s"); ustack(); stack();
		usym(uregs[R_PC]); umod(uregs[R_PC]); uaddr(uregs[R_PC]); tracemem(curthread, 8); print(curthread->fs);
	}
	pid$target:a.out:work:entry {
		@q = quantize(arg0); @l = lquantize(arg0, 0, 50, 10); @ll = llquantize(arg0, 10, 0, 3, 10);
		@a[execname] = avg(arg0); @mn = min(arg0); @mx = max(arg0); @sd = stddev(arg0); @su = sum(arg0);
		@st[ustack()] = count(); @k[stack(), probefunc, (int)arg0 & 1] = count();
	}
	pid$target:a.out:work:entry /arg0 == 5/ { trace(*(int *)0); }
	pid$target:a.out:work:entry /arg0 == 6/ { s = speculation(); speculate(s); printf("spec %d\n", arg0); }
	pid$target:a.out:work:entry /arg0 == 6/ { commit(s); }
	pid$target:a.out:work:entry /arg0 == 7/ { printa(@su); printa("%@d\n", @mx); }`,
	`BEGIN { trace((char)-1); trace((short)300); sym(0); exit(2); }`,
	`BEGIN { setopt("quiet"); x = 1; printf("%d %s\n", x, "q"); trace(x / x); exit(0); }`,
}

// TestPrograms runs each program under -x oformat=json with the target
// calling getppid and work 777 times: every line of the output is an
// object the schema accepts, and the getppid count is exact. An unknown
// format is refused.
func TestPrograms(t *testing.T) {
	dtrace, target := outtest.Build(t)
	s := schema(t)
	var found bool
	for i, p := range programs {
		stdout, stderr, status := outtest.Run(t, dtrace, "-x", "oformat=json", "-n", p, "-c", target+" 777")
		if status != 0 && !(i == 2 && status == 2) {
			t.Fatalf("program %d: status %d\n%s", i, status, stderr)
		}
		objs := validate(t, s, stdout)
		if len(objs) == 0 {
			t.Fatalf("program %d printed nothing\n%s", i, stderr)
		}
		for _, o := range objs {
			if o["type"] != "aggregation" {
				continue
			}
			for _, e := range o["entries"].([]any) {
				e := e.(map[string]any)
				keys := e["keys"].([]any)
				if len(keys) == 1 && keys[0].(map[string]any)["value"] == "getppid" && e["value"] == float64(777) {
					found = true
				}
			}
		}
		if i == 1 && !strings.Contains(stdout, `"type":"fault"`) {
			t.Errorf("program 1 shows no fault:\n%s", stdout)
		}
	}
	if !found {
		t.Errorf("no aggregation entry getppid 777")
	}
	// An unknown format is refused before anything is attached.
	outtest.Refused(t, dtrace, "oformat=yaml")
}

// TestFiringTime: a record's timestamp is when the probe fired, not when
// the consumer read it. dtrace is stopped (SIGSTOP) for 700 ms while a
// 50 ms tick traces walltimestamp; the records fired meanwhile are read
// only after SIGCONT, yet each one's timestamp lies within 20 ms of the
// walltimestamp it traced.
func TestFiringTime(t *testing.T) {
	dtrace, _ := outtest.Build(t)
	s := schema(t)
	cmd := exec.Command(dtrace, "-x", "oformat=json", "-n", `tick-50ms { trace(walltimestamp); } tick-2s { exit(0); }`)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	time.Sleep(600 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGSTOP)
	stop := time.Now().UnixNano()
	time.Sleep(700 * time.Millisecond)
	cont := time.Now().UnixNano()
	cmd.Process.Signal(syscall.SIGCONT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dtrace: %v\n%s", err, stderr.String())
	}
	during := 0
	for _, o := range validate(t, s, stdout.String()) {
		if o["type"] != "probe" || o["probe"].(map[string]any)["name"] != "tick-50ms" {
			continue
		}
		ts := int64(o["timestamp"].(float64))
		v := o["actions"].([]any)[0].(map[string]any)["value"].(map[string]any)["value"]
		wall := int64(v.(float64))
		if d := time.Duration(ts - wall).Abs(); d > 20*time.Millisecond {
			t.Errorf("timestamp %d is %v from the walltimestamp it traced, %d", ts, d, wall)
		}
		if wall > stop && wall < cont-100*time.Millisecond.Nanoseconds() {
			during++
		}
	}
	if during == 0 {
		t.Errorf("no record fired while dtrace was stopped\n%s", stdout.String())
	}
}
