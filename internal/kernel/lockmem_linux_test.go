//go:build linux

package kernel

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestSetLockMem(t *testing.T) {
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_MEMLOCK, &old)
	if err := SetLockMem(-2); err != nil { // unset: nothing changes
		t.Fatal(err)
	}
	// Lowering is always allowed; the soft limit must follow.
	if err := SetLockMem(64 << 10); err != nil {
		t.Fatalf("lowering lockmem: %v", err)
	}
	var now unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_MEMLOCK, &now); err != nil {
		t.Fatal(err)
	}
	if now.Cur != 64<<10 {
		t.Errorf("soft limit %d after lockmem=64k", now.Cur)
	}
	// Beyond a finite hard limit without the capability: an error, and
	// the soft limit raised to the hard one.
	if now.Max != unix.RLIM_INFINITY && now.Max < 1<<40 {
		err := SetLockMem(1 << 40)
		unix.Getrlimit(unix.RLIMIT_MEMLOCK, &now)
		if err == nil && now.Cur != 1<<40 || err != nil && now.Cur != now.Max {
			t.Errorf("lockmem=1t: err %v, limits %+v", err, now)
		}
	}
}
