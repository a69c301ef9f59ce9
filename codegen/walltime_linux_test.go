package codegen

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestWalltimestamp: walltimestamp is the wall clock (time.Now), whether
// or not the kernel's TAI offset is set (it is 0 on this machine unless
// a time daemon set it; the program subtracts what it is).
func TestWalltimestamp(t *testing.T) {
	before := time.Now().UnixNano()
	out := runD(t, `BEGIN { trace(walltimestamp); }`, Options{})
	after := time.Now().UnixNano()
	m := regexp.MustCompile(`\d{15,}`).FindString(out)
	wall, err := strconv.ParseInt(m, 10, 64)
	if err != nil {
		t.Fatalf("no walltimestamp in %q", out)
	}
	if wall < before || wall > after {
		t.Errorf("walltimestamp %d outside [%d, %d] (TAI offset %d ns)", wall, before, after, taiOffset())
	}
}
