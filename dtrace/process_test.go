//go:build linux

package dtrace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCreateProcess(t *testing.T) {
	p, err := CreateProcess([]string{"/bin/true"}, nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid() <= 0 {
		t.Fatalf("pid %d", p.Pid())
	}
	select {
	case <-p.Exited():
		t.Fatal("process ran before Continue")
	default:
	}
	if allExited([]*Process{p}) {
		t.Error("allExited before the process ran")
	}
	p.Continue()
	<-p.Exited()
	if !allExited([]*Process{p}) {
		t.Error("not allExited after the process exited")
	}
	p.Continue() // twice is fine

	if _, err := CreateProcess([]string{"/nonexistent/prog"}, nil, io.Discard, io.Discard); err == nil ||
		err.Error() != "failed to execute /nonexistent/prog: No such file or directory" {
		t.Errorf("err = %v", err)
	}
	if _, err := GrabProcess(0); err == nil || err.Error() != "invalid pid: 0" {
		t.Errorf("err = %v", err)
	}
}

func TestAbandon(t *testing.T) {
	p, err := CreateProcess([]string{"sleep", "60"}, nil, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p.Abandon() // never continued: killed
	<-p.Exited()
}

// TestProcessEnv checks that -x setenv and unsetenv shape the environment
// of the processes -c creates, and only theirs.
func TestProcessEnv(t *testing.T) {
	t.Setenv("OPTAUDIT_GONE", "1")
	t.Setenv("OPTAUDIT_KEPT", "2")
	o := NewOptions()
	for _, arg := range []string{"setenv=OPTAUDIT_NEW=a=b", "unsetenv=OPTAUDIT_GONE", "setenv=OPTAUDIT_KEPT=3"} {
		if err := o.SetArg(arg); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
	}
	for _, bad := range []string{"setenv=NOVALUE", "setenv==x", "unsetenv=A=b", "unsetenv="} {
		if err := NewOptions().SetArg(bad); err != ErrBadOptVal {
			t.Errorf("%s: err %v, want %v", bad, err, ErrBadOptVal)
		}
	}
	if err := NewOptions().SetPragma("setenv", "A=b", true); err == nil {
		t.Error("setenv accepted from a pragma")
	}
	var out strings.Builder
	p, err := StartProcess(true, "env", o.ProcEnv, nil, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p.Continue()
	<-p.Exited()
	env := "\n" + out.String()
	for _, want := range []string{"\nOPTAUDIT_NEW=a=b\n", "\nOPTAUDIT_KEPT=3\n", "\nPATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("child environment lacks %q", want)
		}
	}
	if strings.Contains(env, "OPTAUDIT_GONE") || strings.Count(env, "OPTAUDIT_KEPT=") != 1 {
		t.Errorf("child environment:%s", env)
	}
	if os.Getenv("OPTAUDIT_GONE") != "1" {
		t.Error("unsetenv changed dtrace's own environment")
	}
}

// TestGrabZombie: -p of a process that exited but was not reaped fails
// as for one that does not exist, as dtrace-utils' grab does, while a
// live process is grabbed.
func TestGrabZombie(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	p, err := GrabProcess(pid)
	if err != nil {
		t.Fatalf("grabbing a live process: %v", err)
	}
	select {
	case <-p.Exited():
		t.Fatal("a live process is marked exited")
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	waitZombie(t, pid)
	if _, err := GrabProcess(pid); err == nil || err.Error() != "No such process" {
		t.Errorf("grabbing zombie %d: err = %v, want No such process", pid, err)
	}
}

// waitZombie waits until process pid, a child not yet reaped, is a zombie.
func waitZombie(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return
		}
	}
	t.Fatalf("process %d did not become a zombie", pid)
}
