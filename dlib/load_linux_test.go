//go:build linux

package dlib

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/ktypes"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlang/types"
)

func loadForKernel(t *testing.T) (*syntax.FileSet, *ktypes.Types, *Library) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); errors.Is(err, os.ErrNotExist) {
		t.Skip("the kernel has no BTF (/sys/kernel/btf/vmlinux)")
	}
	fset := syntax.NewFileSet()
	k := ktypes.Open()
	lib := Load(fset, &check.Config{Kernel: k}, k.IsTypeName)
	return fset, k, lib
}

// alternatives are sets of library files of which exactly one is for the
// running kernel: the others are dropped.
var alternatives = [][]string{{"io-dev.d", "io-dev61.d"}}

// On the running kernel every file of the library checks, but for one
// of each set of alternatives, whichever is for this kernel.
func TestLoadRunningKernel(t *testing.T) {
	_, _, lib := loadForKernel(t)
	loaded := map[string]bool{}
	for _, n := range lib.Names {
		loaded[n] = true
	}
	alt := map[string]bool{}
	for _, set := range alternatives {
		n := 0
		for _, f := range set {
			alt[f] = true
			if loaded[f] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d of %v loaded, want one", n, set)
		}
	}
	for _, f := range order {
		if !alt[f] && !loaded[f] {
			t.Errorf("%s not loaded", f)
		}
	}
	for _, err := range lib.Dropped {
		if !alt[strings.SplitN(err.Error(), ":", 2)[0]] {
			t.Error(err)
		}
	}
}

// User programs see the library's types and inlines with the kernel's
// types under them.
func TestUserProgram(t *testing.T) {
	fset, k, lib := loadForKernel(t)
	src := `
BEGIN
{
	trace(curpsinfo->pr_pid);
	trace(curpsinfo->pr_fname);
	trace(curlwpsinfo->pr_onpro);
	trace(cpu);
	trace(curcpu->cpu_id);
	trace(EPERM + SIGKILL + R_PC + DTRACEFLT_BADADDR);
	trace(fds[0].fi_pathname);
	trace(xlate<psinfo_t *>(curthread)->pr_ppid);
	trace(((psinfo_t *)0)->pr_uid);
	trace((u64)curthread->pid);
	trace(tcp_state_string[TCP_STATE_LISTEN]);
	trace(cwd);
	trace(curpsinfo->pr_psargs);
	trace(xlate<ipinfo_t *>((struct iphdr *)arg0)->ip_saddr);
	trace(xlate<ipinfo_t *>((void_ip_t *)arg0)->ip_plength);
	trace(xlate<ipv4info_t *>((struct iphdr *)arg0)->ipv4_protostr);
	trace(xlate<ipv6info_t *>((struct ipv6hdr *)arg0)->ipv6_nextstr);
	trace(xlate<ifinfo_t *>((struct net_device *)arg0)->if_name);
	trace(xlate<tcpsinfo_t *>((struct tcp_sock *)arg0)->tcps_raddr);
	trace(xlate<tcpinfo_t *>((struct tcphdr *)arg0)->tcp_flags);
	trace(xlate<udpsinfo_t *>((struct udp_sock *)arg0)->udps_lport);
	trace(xlate<bufinfo_t *>((struct bio *)arg0)->b_flags);
	trace(xlate<devinfo_t *>((struct bio *)arg0)->dev_statname);
	trace(xlate<devinfo_t *>((struct buffer_head *)arg0)->dev_name);
	trace(xlate<fileinfo_t *>((struct file *)arg0)->fi_fs);
	trace(xlate<lwpsinfo_t *>(curthread)->pr_sname);
}
`
	pc := &syntax.Config{IsTypeName: lib.IsTypeName, IsIdent: lib.IsIdent}
	prog, err := pc.Parse(fset, "user.d", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	progs := append(lib.Programs[:len(lib.Programs):len(lib.Programs)], prog)
	info, err := check.Check(fset, progs, &check.Config{Kernel: k, LibraryPrograms: len(lib.Programs)})
	if err != nil {
		t.Fatal(err)
	}
	// The type of curpsinfo->pr_pid is the library's pid_t.
	var found bool
	for e, tv := range info.Types {
		if m, ok := e.(*syntax.MemberExpr); ok && m.Name.Name == "pr_pid" {
			found = true
			if got := types.TypeString(tv.Type); got != "pid_t" {
				t.Errorf("curpsinfo->pr_pid has type %s, want pid_t", got)
			}
		}
	}
	if !found {
		t.Error("no type recorded for curpsinfo->pr_pid")
	}
}

// A program may not depend on a library explicitly; the library may.
func TestDependsOnLibrary(t *testing.T) {
	fset, k, lib := loadForKernel(t)
	pc := &syntax.Config{IsTypeName: lib.IsTypeName}
	prog, err := pc.Parse(fset, "user.d", []byte("#pragma D depends_on library procfs.d\nBEGIN {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	progs := append(lib.Programs[:len(lib.Programs):len(lib.Programs)], prog)
	_, err = check.Check(fset, progs, &check.Config{Kernel: k, LibraryPrograms: len(lib.Programs)})
	if err == nil || !strings.Contains(err.Error(), "may not explicitly depend on a library") {
		t.Errorf("got %v, want D_PRAGMA_DEPEND", err)
	}
}

// Members the library's types do not have are errors.
func TestUserProgramBadMember(t *testing.T) {
	fset, k, lib := loadForKernel(t)
	pc := &syntax.Config{IsTypeName: lib.IsTypeName, IsIdent: lib.IsIdent}
	prog, err := pc.Parse(fset, "user.d", []byte("BEGIN { trace(curpsinfo->pr_nosuch); }\n"))
	if err != nil {
		t.Fatal(err)
	}
	progs := append(lib.Programs[:len(lib.Programs):len(lib.Programs)], prog)
	if _, err := check.Check(fset, progs, &check.Config{Kernel: k, LibraryPrograms: len(lib.Programs)}); err == nil {
		t.Error("curpsinfo->pr_nosuch checked")
	}
}

// A translator that names a member the kernel's struct lacks does not
// check, so a file written for another kernel is dropped.
func TestLoadDropsKernelDrift(t *testing.T) {
	_, k, _ := loadForKernel(t)
	srcs := []Source{
		{"ok.d", "typedef struct x { int a; } x_t;\n"},
		{"drift.d", "translator x_t < struct task_struct *T > { a = T->no_such_member; };\n"},
	}
	lib := load(syntax.NewFileSet(), &check.Config{Kernel: k}, k.IsTypeName, srcs)
	if strings.Join(lib.Names, " ") != "ok.d" || len(lib.Dropped) != 1 {
		t.Errorf("loaded %v, dropped %v; want ok.d loaded and drift.d dropped", lib.Names, lib.Dropped)
	}
}
