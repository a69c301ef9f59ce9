package check_test

import (
	"testing"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/dlib"
)

// TestLibrary checks the constant files of the D library (package dlib)
// and a program that uses them. (Files with translators over kernel
// types, such as sched.d, need a kernel.)
func TestLibrary(t *testing.T) {
	fset := syntax.NewFileSet()
	var progs []*syntax.Program
	names := map[string]bool{"unistd.d": true, "signal.d": true, "errno.d": true, "regs.d": true, "net.d": true, "pcap.d": true}
	for _, f := range dlib.Sources() {
		if !names[f.Name] {
			continue
		}
		delete(names, f.Name)
		p, err := syntax.Parse(fset, f.Name, []byte(f.Text), 0)
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		progs = append(progs, p)
	}
	if len(names) != 0 {
		t.Fatalf("library files missing: %v", names)
	}
	src := "BEGIN { trace(SIGKILL + EPERM + uregs[R_SP] + DTRACEFLT_BADADDR + AF_INET6 + PCAP_IP); trace(EWOULDBLOCK); }"
	p, err := syntax.Parse(fset, "t.d", []byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(fset, append(progs, p), &check.Config{LibraryPrograms: len(progs)})
	if err != nil {
		t.Fatal(err.(check.ErrorList)[0].Tagged())
	}
	var sum *check.Const
	for e := range info.Types {
		if call, ok := e.(*syntax.CallExpr); ok && len(call.Args) == 1 {
			if b, ok := call.Args[0].(*syntax.Ident); ok && b.Name == "EWOULDBLOCK" {
				sum = info.Types[b].Value
			}
		}
	}
	if sum == nil || sum.Int != 11 {
		t.Errorf("EWOULDBLOCK = %v", sum)
	}
}
