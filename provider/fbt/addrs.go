package fbt

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/provider"
)

// load reads the kernel's traceable functions: from
// available_filter_functions_addrs where the kernel has it (6.5 and
// later), which gives their addresses too, else from
// available_filter_functions. Reading either costs the kernel a symbol
// lookup per function (a second under emulation), so only one is read.
//
// A kprobe.multi link given addresses rather than names attaches to
// functions of loadable modules as well as vmlinux, and to every function
// of a name several static functions share (the kernel resolves a name to
// one of them only), so that a wide description misses none: a probe
// stands for all the functions of its module and name, as in the listing.
func (pv *Provider) load() {
	pv.once.Do(func() {
		root, err := kernel.MountTracefs()
		if err != nil {
			pv.reason = fmt.Sprintf("tracefs is not available (%v)", err)
			return
		}
		data, err := os.ReadFile(filepath.Join(root, "available_filter_functions_addrs"))
		withAddrs := err == nil
		if !withAddrs {
			data, err = os.ReadFile(filepath.Join(root, "available_filter_functions"))
		}
		if err != nil {
			pv.reason = "the kernel has no function tracer (available_filter_functions: " + errText(err) + ")"
			return
		}
		pv.parseFunctions(data, withAddrs)
		if len(pv.funcs) == 0 {
			pv.reason = "the kernel's function tracer lists no traceable functions (a kernel built without kprobes and ftrace)"
		}
	})
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// parseFunctions reads available_filter_functions: "name" or
// "name [module]" per line, each after a hexadecimal address withAddrs
// (available_filter_functions_addrs). Functions of one module and name
// (static functions) are one function, with all their addresses; entries
// the kernel marks invalid are left out.
func (pv *Provider) parseFunctions(data []byte, withAddrs bool) {
	pv.funcs, pv.addrs, pv.more, pv.shared = nil, nil, nil, nil
	pv.byName = make(map[string][]int, 50000)
	mods := map[string]string{Kernel: Kernel}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var addr uint64
		if withAddrs {
			i := bytes.IndexByte(line, ' ')
			if i < 0 {
				continue
			}
			a, err := strconv.ParseUint(string(line[:i]), 16, 64)
			if err != nil {
				continue
			}
			addr, line = a, line[i+1:]
		}
		name, mod := line, []byte(Kernel)
		if i := bytes.IndexByte(line, ' '); i >= 0 {
			name = line[:i]
			rest := bytes.TrimSpace(line[i+1:])
			if len(rest) > 2 && rest[0] == '[' && rest[len(rest)-1] == ']' {
				mod = rest[1 : len(rest)-1]
			}
		}
		if len(name) == 0 || bytes.HasPrefix(name, []byte("__ftrace_invalid_address__")) {
			continue
		}
		m, ok := mods[string(mod)] // no allocation for the lookup
		if !ok {
			m = string(mod)
			mods[m] = m
		}
		f := function{mod: m, name: string(name)}
		dup := -1
		for _, j := range pv.byName[f.name] {
			if pv.funcs[j].mod == f.mod {
				dup = j
			}
		}
		if dup >= 0 {
			if !withAddrs {
				if pv.shared == nil {
					pv.shared = map[int]int{}
				}
				pv.shared[dup]++
			}
			if withAddrs && addr != 0 && addr != uint64(pv.addrs[dup]) && !slices.Contains(pv.more[dup], uintptr(addr)) {
				if pv.more == nil {
					pv.more = map[int][]uintptr{}
				}
				pv.more[dup] = append(pv.more[dup], uintptr(addr))
			}
			continue
		}
		pv.byName[f.name] = append(pv.byName[f.name], len(pv.funcs))
		pv.funcs = append(pv.funcs, f)
		if withAddrs {
			pv.addrs = append(pv.addrs, uintptr(addr))
		}
	}
}

// addresses returns every address of function i (none where the kernel
// lists no addresses).
func (pv *Provider) addresses(i int) []uintptr {
	if pv.addrs == nil || pv.addrs[i] == 0 {
		return nil
	}
	return append([]uintptr{pv.addrs[i]}, pv.more[i]...)
}

// needAddresses reports whether a kprobe.multi link on ps must be given
// addresses: some function is in a module or has several copies. Names
// serve otherwise (and cost no reading of kallsyms).
func (pv *Provider) needAddresses(ps []*provider.Probe) bool {
	if pv.addrs == nil || endbrSize == 0 {
		return false
	}
	for _, p := range ps {
		fn := p.Data.(probeData).fn // pv.data checked Data
		if pv.funcs[fn].mod != Kernel || len(pv.more[fn]) > 0 {
			return true
		}
	}
	return false
}

// multiByAddress gives a kprobe.multi link every address of the probes'
// functions (all the functions of a module and name), each with its
// probe's cookie; ok is false where the kernel's symbols do not say
// where the functions start.
func (pv *Provider) multiByAddress(ps []*provider.Probe, cookies []uint64) (addrs []uintptr, cs []uint64, ok bool) {
	starts, err := pv.starts()
	if err != nil {
		return nil, nil, false
	}
	addrs, cs = make([]uintptr, 0, len(ps)), make([]uint64, 0, len(ps))
	for i, p := range ps {
		for _, a := range pv.addresses(p.Data.(probeData).fn) { // pv.data checked Data
			if s, moved := starts[a]; moved {
				a = s
			}
			addrs = append(addrs, a)
			cs = append(cs, cookies[i])
		}
	}
	return addrs, cs, true
}

// starts maps the function tracer's address of each function that
// begins with an ENDBR64 (the call it patches follows it) to the
// function's start, which is what a kprobe.multi link finds cookies by:
// a text symbol of kallsyms at the tracer's address less endbrSize, and
// none at the address itself.
func (pv *Provider) starts() (map[uintptr]uintptr, error) {
	pv.startOnce.Do(func() {
		f, err := os.Open("/proc/kallsyms")
		if err != nil {
			pv.startErr = err
			return
		}
		defer f.Close()
		pv.start, pv.startErr = readStarts(f, pv.addrs, pv.more)
	})
	return pv.start, pv.startErr
}

// readStarts reads kallsyms for starts.
func readStarts(r io.Reader, addrs []uintptr, more map[int][]uintptr) (map[uintptr]uintptr, error) {
	traced := make(map[uintptr]bool, len(addrs)+len(more))
	for _, a := range addrs {
		traced[a] = true
	}
	for _, as := range more {
		for _, a := range as {
			traced[a] = true
		}
	}
	exact := map[uintptr]bool{}
	moved := map[uintptr]uintptr{}
	any := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		// "address type name [module]"; code is t or T.
		line := sc.Bytes()
		if len(line) < 20 || line[16] != ' ' || line[17] != 't' && line[17] != 'T' {
			continue
		}
		v, err := strconv.ParseUint(string(line[:16]), 16, 64)
		if err != nil {
			continue
		}
		a := uintptr(v)
		any = any || a != 0
		switch {
		case traced[a]:
			exact[a] = true
		case traced[a+endbrSize]:
			moved[a+endbrSize] = a
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !any {
		// kptr_restrict hides the addresses.
		return nil, errors.New("kallsyms shows no addresses")
	}
	for a := range moved {
		if exact[a] {
			delete(moved, a)
		}
	}
	return moved, nil
}
