package kernel

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Capability numbers from linux/capability.h that x/sys may not name.
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// CheckPrivileges reports ErrPrivileges unless the process may load BPF
// programs and open perf events: either CAP_SYS_ADMIN, or both CAP_BPF and
// CAP_PERFMON, in the effective set.
func CheckPrivileges() error {
	eff, err := effectiveCaps()
	if err != nil {
		// Without capget we cannot tell; root is the common case.
		if os.Geteuid() == 0 {
			return nil
		}
		return ErrPrivileges
	}
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	if has(capSysAdmin) || (has(capBPF) && has(capPerfmon)) {
		return nil
	}
	return ErrPrivileges
}

func effectiveCaps() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, err
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}

// PossibleCPUs returns the ids of every CPU the kernel may ever bring
// online; per-CPU maps and buffers are sized by it.
func PossibleCPUs() ([]int, error) {
	return readCPUList("/sys/devices/system/cpu/possible")
}

// OnlineCPUs returns the ids of the CPUs online now; perf events can only
// be opened on these.
func OnlineCPUs() ([]int, error) {
	return readCPUList("/sys/devices/system/cpu/online")
}

func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

const tracefsMagic = 0x74726163

// MountTracefs makes sure tracefs is mounted at TracefsPath, mounting it
// if needed, and returns the path.
func MountTracefs() (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(TracefsPath, &st); err == nil && st.Type == tracefsMagic {
		return TracefsPath, nil
	}
	if err := unix.Mount("nodev", TracefsPath, "tracefs", 0, ""); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return TracefsPath, nil
		}
		return "", fmt.Errorf("mount tracefs at %s: %w", TracefsPath, err)
	}
	return TracefsPath, nil
}
