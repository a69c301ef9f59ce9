package kernel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrPrivileges is returned by CheckPrivileges when the process lacks the
// capabilities DTrace needs. Its text is worded so that the command can
// print it as "dtrace: " + err, which gives dtrace(1M)'s message.
var ErrPrivileges = errors.New("failed to initialize dtrace: DTrace requires additional privileges")

// TracefsPath is where MountTracefs makes tracefs available.
const TracefsPath = "/sys/kernel/tracing"

// ParseCPUList parses the kernel's CPU list format ("0-3,5,7-8").
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad cpu list %q", s)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("bad cpu list %q", s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
