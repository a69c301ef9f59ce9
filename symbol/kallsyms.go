package symbol

import (
	"bufio"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// KernelModule is the module name dtrace gives the core kernel.
const KernelModule = "vmlinux"

// ksym is one kernel symbol; the symbol ends where the next one begins.
type ksym struct {
	addr uint64
	name string
	mod  string
}

// Kallsyms is a sorted table of kernel symbols.
type Kallsyms struct {
	syms []ksym

	basesOnce sync.Once
	bases     map[string]uint64 // module -> lowest symbol address
}

// ReadKallsyms parses the /proc/kallsyms format: "ADDR TYPE NAME
// [\t[MODULE]]". Absolute and undefined symbols are left out, as they name
// no code or data that an address could fall into.
func ReadKallsyms(r io.Reader) (*Kallsyms, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	k := &Kallsyms{}
	// Module names repeat for thousands of symbols: intern them.
	mods := map[string]string{}
	for sc.Scan() {
		line := sc.Text()
		sp := strings.IndexByte(line, ' ')
		if sp < 0 || sp+3 > len(line) {
			continue
		}
		addr, err := strconv.ParseUint(line[:sp], 16, 64)
		if err != nil || addr == 0 {
			continue
		}
		switch line[sp+1] {
		case 'a', 'A', 'U', 'u', 'N', 'n':
			continue
		}
		rest := line[sp+3:]
		mod := KernelModule
		if tab := strings.IndexByte(rest, '\t'); tab >= 0 {
			m := strings.TrimSuffix(strings.TrimPrefix(rest[tab+1:], "["), "]")
			rest = rest[:tab]
			if im, ok := mods[m]; ok {
				m = im
			} else {
				mods[m] = m
			}
			mod = m
		}
		k.syms = append(k.syms, ksym{addr: addr, name: strings.Clone(rest), mod: mod})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	sort.SliceStable(k.syms, func(i, j int) bool { return k.syms[i].addr < k.syms[j].addr })
	return k, nil
}

// Len returns the number of symbols.
func (k *Kallsyms) Len() int { return len(k.syms) }

// Lookup returns the module and symbol containing addr and the offset
// into the symbol. Where several symbols share an address the first one
// listed wins, as it does in the kernel's own %pS.
func (k *Kallsyms) Lookup(addr uint64) (mod, fn string, off uint64, ok bool) {
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].addr > addr })
	if i == 0 {
		return "", "", 0, false
	}
	at := k.syms[i-1].addr
	first := sort.Search(i, func(j int) bool { return k.syms[j].addr >= at })
	s := k.syms[first]
	return s.mod, s.name, addr - s.addr, true
}

// ModuleBase returns the lowest symbol address of the module that holds
// addr, so that all the addresses of one module compare equal.
func (k *Kallsyms) ModuleBase(addr uint64) (uint64, bool) {
	mod, _, _, ok := k.Lookup(addr)
	if !ok {
		return 0, false
	}
	k.basesOnce.Do(func() {
		k.bases = map[string]uint64{}
		for _, s := range k.syms {
			if _, ok := k.bases[s.mod]; !ok {
				k.bases[s.mod] = s.addr
			}
		}
	})
	base, ok := k.bases[mod]
	return base, ok
}

// Addr returns the address of the named symbol, the first one found in
// address order when modules define the name more than once.
func (k *Kallsyms) Addr(name string) (uint64, bool) {
	for _, s := range k.syms {
		if s.name == name {
			return s.addr, true
		}
	}
	return 0, false
}

var (
	kallsymsOnce sync.Once
	kallsyms     *Kallsyms
	kallsymsErr  error
)

// KernelSymbols returns the symbols of the running kernel, read from
// /proc/kallsyms on first use. Modules loaded later are not seen.
func KernelSymbols() (*Kallsyms, error) {
	kallsymsOnce.Do(func() {
		f, err := os.Open("/proc/kallsyms")
		if err != nil {
			kallsymsErr = err
			return
		}
		defer f.Close()
		kallsyms, kallsymsErr = ReadKallsyms(f)
	})
	return kallsyms, kallsymsErr
}
