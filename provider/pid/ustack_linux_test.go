//go:build linux

package pid_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/symbol"
)

// TestUstackBeforeFrame traces work, built with frame pointers, where its
// frame is not linked yet (entry, the push %rbp, the instruction after
// it): @[ustack()] must show work`work then work`main, whose frame the
// frame-pointer walk from %rbp misses there, every frame symbolized (the
// libc one as libc.so.6`__libc_start_call_main+0x.., not a bare address);
// ustackdepth counts the caller and ucaller is it.
func TestUstackBeforeFrame(t *testing.T) {
	for _, tc := range []struct {
		cf    string
		probe []string // work's entry, its push %rbp, the mov %rsp,%rbp
	}{
		{"-fcf-protection=none", []string{"entry", "0", "1"}},
		{"-fcf-protection=full", []string{"entry", "4", "5"}},
	} {
		prog := testprog.BuildWork(t, "-O0", "-fno-omit-frame-pointer", tc.cf)
		for _, probe := range tc.probe {
			t.Run(tc.cf+"/"+probe, func(t *testing.T) {
				const n = 100
				p := testprog.Start(t, prog, strconv.Itoa(n))
				prov := "pid" + strconv.Itoa(p.Pid())
				pv := tracetest.Named(pid.New(symbol.NewSymbolizer()), prov)
				out := tracetest.Trace(t, p.Pid(), "#pragma D option quiet\n"+prov+`:work:work:`+probe+` { @[ustack()] = count(); }
`+prov+`:work:work:`+probe+` /arg0 == 7/ { printf("depth %d caller %A\n", ustackdepth, ucaller); }`,
					func() { p.Release(t) }, pv)
				var frames []string
				for _, l := range strings.Split(out, "\n") {
					if f := strings.TrimSpace(l); f != "" && !strings.HasPrefix(f, "depth ") {
						frames = append(frames, f)
					}
				}
				if len(frames) < 4 || frames[len(frames)-1] != strconv.Itoa(n) {
					t.Fatalf("want one stack counted %d times:\n%s", n, out)
				}
				frames = frames[:len(frames)-1]
				if !strings.HasPrefix(frames[0], "work`work") || !strings.HasPrefix(frames[1], "work`main+0x") {
					t.Errorf("frames %q, want work`work then work`main:\n%s", frames[:2], out)
				}
				for _, f := range frames {
					if !strings.Contains(f, "`") {
						t.Errorf("bare address frame %q:\n%s", f, out)
					}
				}
				if !strings.Contains(out, "libc.so.6`") {
					t.Errorf("no libc frame:\n%s", out)
				}
				if want := "depth " + strconv.Itoa(len(frames)) + " caller work`main+0x"; !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			})
		}
	}
}
