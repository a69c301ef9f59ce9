//go:build linux

package json

import (
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/output/internal/outtest"
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
