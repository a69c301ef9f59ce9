package symbol

import (
	"bytes"
	"debug/elf"
	"os"
	"sync"
)

// The vdso (clock_gettime, gettimeofday, getcpu, time) is an ELF image
// the kernel maps into every process, in no file. Every 64-bit process
// of one kernel maps the same image, so the tracer names another
// process's vdso frames from its own copy: [vdso]`__vdso_clock_gettime+0x..,
// as perf names them.

// vdsoName is the module name of the vdso, as /proc/PID/maps calls it.
const vdsoName = "[vdso]"

var (
	vdsoOnce sync.Once
	vdsoObj  *Object
)

// vdsoObject returns the Object of this process's vdso, nil when it
// cannot be read.
func vdsoObject() *Object {
	vdsoOnce.Do(func() {
		p, err := ReadProcess(os.Getpid())
		if err != nil {
			return
		}
		for _, m := range p.Maps {
			if m.Path != vdsoName || m.End-m.Start > 1<<20 {
				continue
			}
			b, err := readMemory(m.Start, m.End-m.Start)
			if err != nil {
				return
			}
			f, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				return
			}
			if o, err := newObject(f, vdsoName, false); err == nil {
				vdsoObj = o
			}
			return
		}
	})
	return vdsoObj
}

// readMemory reads n bytes of this process's memory at addr.
func readMemory(addr, n uint64) ([]byte, error) {
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, int64(addr)); err != nil {
		return nil, err
	}
	return b, nil
}

// resolveVdso resolves the vdso mapping m of a process: its first
// loadable segment is at the mapping's start.
func resolveVdso(m *Mapping) *resolvedModule {
	r := &resolvedModule{path: vdsoName}
	o := vdsoObject()
	if o == nil || len(o.loads) == 0 || m.Offset != 0 {
		return r
	}
	r.obj, r.bias = o, m.Start-o.loads[0].Vaddr
	return r
}
