package profile

import (
	"testing"

	"github.com/dtrace-go/dtrace/provider"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		ns   uint64
		ok   bool
	}{
		{"profile-97", Profile, 1000000000 / 97, true},
		{"profile-97hz", Profile, 1000000000 / 97, true},
		{"tick-1sec", Tick, 1e9, true},
		{"tick-1s", Tick, 1e9, true},
		{"tick-10ms", Tick, 10e6, true},
		{"tick-10msec", Tick, 10e6, true},
		{"tick-500us", Tick, 500e3, true},
		{"tick-5000000nsec", Tick, 5e6, true},
		{"tick-2min", Tick, 120e9, true},
		{"tick-1h", Tick, 3600e9, true},
		{"tick-1day", Tick, 86400e9, true},
		{"tick-1SEC", Tick, 1e9, true},
		{"tick-100us", Tick, 0, false}, // below 200us
		{"profile-10000", Profile, 0, false},
		{"tick-0", Tick, 0, false},
		{"tick-", Tick, 0, false},
		{"tick-1fortnight", Tick, 0, false},
		{"tock-1", Tick, 0, false},
		{"profiletick-1sec", Tick, 0, false},
	}
	for _, tt := range tests {
		r, ok := ParseName(tt.name)
		if ok != tt.ok || (ok && (r.Kind != tt.kind || r.PeriodNS != tt.ns)) {
			t.Errorf("ParseName(%q) = %+v, %v; want %v %d %v", tt.name, r, ok, tt.kind, tt.ns, tt.ok)
		}
	}
}

func TestProbes(t *testing.T) {
	r := provider.NewRegistry(New())
	match := func(s string) []string {
		ps, err := r.MatchString(s)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.String())
		}
		return names
	}
	if got := match("profile:::"); len(got) != 13 || got[0] != "profile:::profile-97" || got[12] != "profile:::tick-5000" {
		t.Errorf("standing probes = %v", got)
	}
	if got := match("tick-7ms"); len(got) != 1 || got[0] != "profile:::tick-7ms" {
		t.Errorf("on demand = %v", got)
	}
	if got := match("tick-*"); len(got) != 7 {
		t.Errorf("tick-* = %v, want the 6 standing ticks and tick-7ms", got)
	}
	for _, s := range []string{":profile::tick-1sec", "::profile:tick-1sec", "profiletick-1sec", "tick-10us"} {
		if got := match(s); len(got) != 0 {
			t.Errorf("%s matched %v", s, got)
		}
	}
}
