package dlib

import "testing"

func TestNeeded(t *testing.T) {
	srcs := Sources()
	names := func(ss []Source) map[string]bool {
		m := map[string]bool{}
		for _, s := range ss {
			m[s.Name] = true
		}
		return m
	}
	if got := Needed(srcs, "BEGIN { exit(0); }"); len(got) != 0 {
		t.Errorf("BEGIN{exit(0)} needs %v, want nothing", names(got))
	}
	got := names(Needed(srcs, "BEGIN { trace(curpsinfo->pr_pid); }"))
	if !got["procfs.d"] {
		t.Errorf("curpsinfo does not pull in procfs.d: %v", got)
	}
	got = names(Needed(srcs, "BEGIN { x = xlate<psinfo_t>(curthread).pr_pid; }"))
	if !got["procfs.d"] {
		t.Errorf("psinfo_t (a typedef of a struct) does not pull in procfs.d: %v", got)
	}
	got = names(Needed(srcs, "ERROR { exit(arg4 != DTRACEFLT_BADADDR); }"))
	if !got["unistd.d"] {
		t.Errorf("DTRACEFLT_BADADDR does not pull in unistd.d: %v", got)
	}
	got = names(Needed(srcs, "BEGIN { raise(SIGINT); x = EPERM; }"))
	if !got["signal.d"] || !got["errno.d"] {
		t.Errorf("SIGINT/EPERM: %v", got)
	}
	// Dependencies come along: ip.d depends on net.d and procfs.d.
	for _, s := range srcs {
		if s.Name == "ip.d" {
			defs := Defines(s.Text)
			if len(defs) == 0 {
				t.Fatal("ip.d defines nothing")
			}
			got = names(Needed(srcs, defs[0]))
			if !got["ip.d"] || !got["net.d"] || !got["procfs.d"] {
				t.Errorf("%s pulls in %v, want ip.d with net.d and procfs.d", defs[0], got)
			}
		}
	}
}

// TestNeededBuiltins checks that the builtins whose type or value a
// library file defines (check's tables, Lib) pull that file in.
func TestNeededBuiltins(t *testing.T) {
	srcs := Sources()
	for _, c := range []struct{ prog, file string }{
		{"BEGIN { trace(curcpu->cpu_id); }", "sched.d"},
		{"BEGIN { trace(cpu); }", "sched.d"},
		{"BEGIN { trace(ppid); }", "procfs.d"},
		{"BEGIN { trace(progenyof(1)); }", "procfs.d"},
	} {
		found := false
		for _, s := range Needed(srcs, c.prog) {
			found = found || s.Name == c.file
		}
		if !found {
			t.Errorf("%s does not pull in %s", c.prog, c.file)
		}
	}
}
