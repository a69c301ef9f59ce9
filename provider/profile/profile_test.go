package profile

import (
	"testing"

	"github.com/dtrace-go/dtrace/provider"
)

func TestParseName(t *testing.T) {
	// Below 200us, above the profile limit, no number, an unknown unit,
	// other prefixes.
	for _, name := range []string{"tick-100us", "profile-10000", "tick-0", "tick-", "tick-1fortnight", "tock-1", "profiletick-1sec"} {
		if r, ok := ParseName(name); ok {
			t.Errorf("ParseName(%q) = %+v, want it refused", name, r)
		}
	}
	// Each rate and the names that spell it.
	for want, names := range map[Rate][]string{
		{Profile, 1000000000 / 97}: {"profile-97", "profile-97hz"},
		{Tick, 1e9}:                {"tick-1sec", "tick-1s", "tick-1SEC"},
		{Tick, 10e6}:               {"tick-10ms", "tick-10msec"},
		{Tick, 500e3}:              {"tick-500us"},
		{Tick, 5e6}:                {"tick-5000000nsec"},
		{Tick, 120e9}:              {"tick-2min"},
		{Tick, 3600e9}:             {"tick-1h"},
		{Tick, 86400e9}:            {"tick-1day"},
	} {
		for _, name := range names {
			if r, ok := ParseName(name); !ok || r != want {
				t.Errorf("ParseName(%q) = %+v, %v; want %+v", name, r, ok, want)
			}
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
