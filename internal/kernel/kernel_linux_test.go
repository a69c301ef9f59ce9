package kernel

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"0", []int{0}, false},
		{"0-1\n", []int{0, 1}, false},
		{"0-2,5,7-8", []int{0, 1, 2, 5, 7, 8}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseCPUList(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCPUs(t *testing.T) {
	possible, err := PossibleCPUs()
	if err != nil || len(possible) == 0 {
		t.Fatalf("PossibleCPUs() = %v, %v", possible, err)
	}
	online, err := OnlineCPUs()
	if err != nil || len(online) == 0 || len(online) > len(possible) {
		t.Fatalf("OnlineCPUs() = %v, %v (possible %v)", online, err, possible)
	}
}

func TestCheckPrivileges(t *testing.T) {
	err := CheckPrivileges()
	if os.Geteuid() == 0 && err != nil {
		t.Fatalf("CheckPrivileges() as root = %v", err)
	}
	if ErrPrivileges.Error() != "failed to initialize dtrace: DTrace requires additional privileges" {
		t.Fatalf("wording changed: %q", ErrPrivileges)
	}
}

func TestMountTracefs(t *testing.T) {
	p, err := MountTracefs()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p, "events")); err != nil {
		t.Fatalf("tracefs at %s has no events: %v", p, err)
	}
}
