//go:build linux

package dtrace

import (
	"io"
	"testing"
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
