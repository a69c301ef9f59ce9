package fbt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/provider"
)

// Kprobes by address. Where the kernel has no kprobe.multi (Debian's 6.1:
// no CONFIG_FPROBE), a wide description's functions take a kprobe each,
// named by symbol. A name several static functions share is refused
// (EADDRNOTAVAIL: the kernel no longer picks one of them), and would
// reach only one copy on kernels that still pick. Those functions are
// probed at each of their addresses instead: cilium/ebpf names kprobes by
// symbol only, so the perf kprobe PMU is opened here with the address in
// config2 and a zero name, and linked with the probe's id as its cookie.

// kprobePMU is the kprobe PMU's type and its retprobe bit in config.
var kprobePMU = sync.OnceValues(func() (pmu [2]uint32, err error) {
	const dir = "/sys/bus/event_source/devices/kprobe/"
	b, err := os.ReadFile(dir + "type")
	if err != nil {
		return pmu, fmt.Errorf("no perf kprobe PMU: %w", err)
	}
	t, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return pmu, fmt.Errorf("perf kprobe PMU type %q: %w", b, err)
	}
	b, err = os.ReadFile(dir + "format/retprobe")
	if err != nil {
		return pmu, fmt.Errorf("perf kprobe PMU: %w", err)
	}
	bit, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(string(b)), "config:"), 10, 5)
	if err != nil {
		return pmu, fmt.Errorf("perf kprobe PMU retprobe bit %q: %w", b, err)
	}
	return [2]uint32{uint32(t), uint32(bit)}, nil
})

// kprobeAt attaches prog to a kprobe (a kretprobe with ret) at a kernel
// text address, with cookie.
func kprobeAt(addr uint64, ret bool, prog *ebpf.Program, cookie uint64) (io.Closer, error) {
	pmu, err := kprobePMU()
	if err != nil {
		return nil, err
	}
	attr := unix.PerfEventAttr{
		Type:        pmu[0],
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Ext2:        addr, // kprobe_addr; Ext1 (kprobe_func) zero
		Sample_type: unix.PERF_SAMPLE_RAW,
		Sample:      1,
		Wakeup:      1,
	}
	if ret {
		attr.Config = 1 << pmu[1]
	}
	fd, err := unix.PerfEventOpen(&attr, -1, 0, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("kprobe at %#x: perf_event_open: %w", addr, err)
	}
	// BPF_LINK_CREATE of a perf event: prog_fd, target_fd, attach_type,
	// flags, then perf_event.bpf_cookie.
	la := struct {
		progFD, targetFD, attachType, flags uint32
		cookie                              uint64
	}{uint32(prog.FD()), uint32(fd), uint32(ebpf.AttachPerfEvent), 0, cookie}
	lfd, _, errno := unix.Syscall(unix.SYS_BPF, unix.BPF_LINK_CREATE, uintptr(unsafe.Pointer(&la)), unsafe.Sizeof(la))
	if errno != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("kprobe at %#x: link: %w", addr, errno)
	}
	// The link before its event.
	return provider.Closers(provider.FD(fd), provider.FD(lfd)), nil
}

// symbolAddrs reads kallsyms once for the text addresses of fns (every
// symbol of the function's module and name).
func symbolAddrs(fns map[function]bool) (map[function][]uint64, error) {
	f, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSymbolAddrs(f, fns)
}

func readSymbolAddrs(r io.Reader, fns map[function]bool) (map[function][]uint64, error) {
	out := make(map[function][]uint64, len(fns))
	names := make(map[string]bool, len(fns))
	for fn := range fns {
		names[fn.name] = true
	}
	seen, shown := 0, 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		// "address type name" or "address type name\t[module]"
		fs := bytes.Fields(sc.Bytes())
		if len(fs) < 3 || len(fs[1]) != 1 || fs[1][0] != 't' && fs[1][0] != 'T' || !names[string(fs[2])] {
			continue
		}
		a, err := strconv.ParseUint(string(fs[0]), 16, 64)
		if err != nil {
			continue
		}
		fn := function{mod: Kernel, name: string(fs[2])}
		if len(fs) > 3 {
			fn.mod = strings.Trim(string(fs[3]), "[]")
		}
		if !fns[fn] {
			continue
		}
		seen++
		if a != 0 {
			shown++
			out[fn] = append(out[fn], a)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if seen > 0 && shown == 0 {
		return nil, errors.New("kallsyms shows no addresses (kptr_restrict)")
	}
	return out, nil
}
