package consumer

import (
	"encoding/binary"
	"testing"
)

// commBody is a PERF_RECORD_COMM body: pid, tid, the name NUL-padded to
// 8 bytes as the kernel pads it.
func commBody(pid, tid uint32, name string) []byte {
	b := binary.NativeEndian.AppendUint32(nil, pid)
	b = binary.NativeEndian.AppendUint32(b, tid)
	b = append(b, name...)
	return append(b, make([]byte, 8-len(name)%8)...)
}

// taskBody is a PERF_RECORD_FORK or _EXIT body: pid, ppid, tid, ptid,
// time.
func taskBody(pid, ppid, tid, ptid uint32) []byte {
	b := make([]byte, 24)
	for i, v := range []uint32{pid, ppid, tid, ptid} {
		binary.NativeEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// TestComms: a thread is named at exec, its child by it at fork, a
// rename replaces the name, an exited thread's name stays until commKeep
// later exits, and a tid that lived again keeps its new name when its
// old life's turn to go comes.
func TestComms(t *testing.T) {
	const comm, exit, fork = 3, 4, 7
	var c comms
	c.sideband(comm, commBody(10, 10, "jproducer"))
	c.sideband(fork, taskBody(11, 10, 11, 10))
	c.sideband(fork, taskBody(12, 10, 12, 10))
	c.sideband(comm, commBody(12, 12, "sh"))
	c.sideband(comm, []byte{1, 2}) // short: ignored
	for tid, want := range map[uint32]string{10: "jproducer", 11: "jproducer", 12: "sh", 13: ""} {
		if got := c.name(tid); got != want {
			t.Errorf("tid %d: %q, want %q", tid, got, want)
		}
	}
	c.sideband(exit, taskBody(11, 10, 11, 10))
	c.sideband(exit, taskBody(12, 10, 12, 10))
	// Tid 12 lives again as another program.
	c.sideband(fork, taskBody(12, 10, 12, 10))
	c.sideband(comm, commBody(12, 12, "jfilter"))
	for i := range commKeep - 2 {
		tid := uint32(1000 + i)
		c.sideband(fork, taskBody(tid, 10, tid, 10))
		c.sideband(exit, taskBody(tid, 10, tid, 10))
	}
	if got := c.name(11); got != "jproducer" {
		t.Errorf("tid 11, exited %d exits ago: %q", commKeep, got)
	}
	c.sideband(fork, taskBody(5000, 10, 5000, 10))
	c.sideband(exit, taskBody(5000, 10, 5000, 10))
	c.sideband(fork, taskBody(5001, 10, 5001, 10))
	c.sideband(exit, taskBody(5001, 10, 5001, 10))
	if got := c.name(11); got != "" {
		t.Errorf("tid 11, exited %d exits ago: %q, want it gone", commKeep+2, got)
	}
	if got := c.name(12); got != "jfilter" {
		t.Errorf("tid 12 in its second life: %q", got)
	}
	if n := len(c.names); n > commKeep+3 {
		t.Errorf("%d names kept", n)
	}
}
