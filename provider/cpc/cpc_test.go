package cpc

import "testing"

func TestParseName(t *testing.T) {
	good := map[string]Counter{
		"cpu_clock-all-1000000":                 {Type: 1, Config: 0, Mode: All, Count: 1000000},
		"perf_count_sw_task_clock-user-5000":    {Type: 1, Config: 1, Mode: User, Count: 5000},
		"instructions-kernel-10000":             {Type: 0, Config: 1, Mode: Kernel, Count: 10000},
		"perf_count_hw_cpu_cycles-all-99999999": {Type: 0, Config: 0, Mode: All, Count: 99999999},
	}
	for name, want := range good {
		if c, ok := ParseName(name); !ok || c != want {
			t.Errorf("ParseName(%q) = %+v, %v; want %+v", name, c, ok, want)
		}
	}
	for _, name := range []string{
		"cpu_clock-all-100", "cpu_clock-all-4999", "cpu_clock-all-10000bonehead", "nonexistentevent-all-10000",
		"cpu_clock-most-10000", "cpu_clock-all", "cpu_clock-all--10000", "cpu_clock-all-+10000", "cpu-clock-all-10000",
		"cpu_clock-all-99999999999999999999999", "BEGIN", "",
	} {
		if c, ok := ParseName(name); ok {
			t.Errorf("ParseName(%q) = %+v, want no probe", name, c)
		}
	}
}
