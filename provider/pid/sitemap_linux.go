//go:build linux

package pid

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/symbol"
)

// On kernels without uprobe_multi each uprobe is a perf event, and closing
// one waits for an RCU grace period under the kernel's event_mutex, one
// close after the other: 9,552 sites took 398 s to detach in a 6.1 guest.
// There the sites of one attachment share one perf event instead (a
// tracefs uprobe event holding them all, provider.TraceEvent), which has one
// cookie; the program finds each site's cookie in the site map by the
// process and the probed address, which a uprobe's handler sees as the
// instruction pointer.

// siteMapName is the map of sites' cookies by process and address.
const siteMapName = "dt_pid_sites"

// siteMapSize bounds the sites of a session: MaxProbes probes of a
// description, with room for a few such descriptions.
const siteMapSize = 4 * MaxProbes

// siteKey is the site map's key: the process, the program's share group
// (groupOf: an address can have a probe in several groups, entry and
// offset 0, say) and the address.
type siteKey struct {
	TGID  uint32
	Group uint32
	Addr  uint64
}

// groupOf names d's share group in the site map's keys.
func groupOf(d *Probe) uint32 {
	h := fnv.New32a()
	h.Write([]byte(shareKey(d)))
	return h.Sum32()
}

// viaSiteMap reports whether d's program finds cookies in the site map:
// on kernels without uprobe_multi, except for uretprobes, which fire at
// the return address and so cannot tell their site by it (their cookie
// holds only the probe id, and they keep one perf event each).
func viaSiteMap(d *Probe) bool {
	return !Multi() && !(d.Kind == Return && !d.AtReturns)
}

// siteCookie returns the instructions that leave d's cookie in R0 (see
// provider.CookieReader), or nil for bpf_get_attach_cookie.
func siteCookie(d *Probe, r *Regs) asm.Instructions {
	if !viaSiteMap(d) {
		return nil
	}
	// A site with a perf event of its own has its cookie there (never
	// 0: it holds the probe id); the shared event's is 0.
	return asm.Instructions{
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.FnGetAttachCookie.Call(),
		{OpCode: asm.JNE.Op(asm.ImmSource), Dst: asm.R0, Constant: 0, Offset: 13},
		asm.LoadMem(asm.R1, asm.R6, r.IP, asm.DWord),
		asm.StoreMem(asm.RFP, -16, asm.R1, asm.DWord),
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.StoreMem(asm.RFP, -24, asm.R0, asm.Word),
		asm.StoreImm(asm.RFP, -20, int64(int32(groupOf(d))), asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference(siteMapName),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -24),
		asm.FnMapLookupElem.Call(),
		// A site the map does not have (an object mapped again
		// elsewhere) reads as cookie 0, which no probe has.
		{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Constant: 0, Offset: 1},
		asm.LoadMem(asm.R0, asm.R0, 0, asm.DWord),
	}
}

// ReadCookie returns how p's program reads its cookie
// (provider.CookieReader).
func (*Provider) ReadCookie(p *provider.Probe) asm.Instructions {
	d, ok := p.Data.(*Probe)
	if !ok {
		return nil
	}
	return siteCookie(d, ArchRegs())
}

// Maps returns the site map where p's program uses it (provider.Mapper).
func (*Provider) Maps(p *provider.Probe) []provider.HashMap {
	d, ok := p.Data.(*Probe)
	if !ok || !viaSiteMap(d) {
		return nil
	}
	return []provider.HashMap{{Name: siteMapName, KeySize: 16, ValueSize: 8, MaxEntries: siteMapSize, Grows: true}}
}

// siteEntries are the site map's entries of one attachment; Close
// deletes them and closes the map.
type siteEntries struct {
	m    *ebpf.Map
	keys []siteKey
}

// putSites enters in m, for share group group of process pid, the cookie
// of each of the sites (sites[i] for i in idx) at each of its addresses
// (addrs[i], siteAddrs).
func putSites(m *ebpf.Map, pid int, group uint32, sites []Site, idx []int, addrs [][]uint64) (io.Closer, error) {
	e := &siteEntries{m: m}
	var vals []uint64
	for _, i := range idx {
		for _, a := range addrs[i] {
			e.keys = append(e.keys, siteKey{TGID: uint32(pid), Group: group, Addr: a})
			vals = append(vals, sites[i].Cookie)
		}
	}
	if len(e.keys) == 0 {
		return e, nil
	}
	if _, err := m.BatchUpdate(e.keys, vals, nil); err != nil {
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("site map: %w", err)
		}
		for j := range e.keys {
			if err := m.Put(e.keys[j], vals[j]); err != nil {
				e.Close()
				return nil, fmt.Errorf("site map: %w", err)
			}
		}
	}
	return e, nil
}

// Close deletes the entries and closes the map.
func (e *siteEntries) Close() error {
	if len(e.keys) > 0 {
		if _, err := e.m.BatchDelete(e.keys, nil); err != nil {
			for _, k := range e.keys {
				e.m.Delete(k)
			}
		}
	}
	return e.m.Close()
}

// siteAddrs returns, for each site, the addresses at which process pid
// has its file offset mapped executable (where a uprobe on it fires),
// and its file's inode.
func siteAddrs(pid int, sites []Site) (addrs [][]uint64, inodes []uint64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, nil, err
	}
	maps, err := symbol.ParseMaps(f)
	f.Close()
	if err != nil {
		return nil, nil, err
	}
	byPath := map[string]uint64{}
	addrs, inodes = make([][]uint64, len(sites)), make([]uint64, len(sites))
	for i, s := range sites {
		ino, ok := byPath[s.Path]
		if !ok {
			var st unix.Stat_t
			if err := unix.Stat(s.Path, &st); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", s.Path, err)
			}
			ino = st.Ino
			byPath[s.Path] = ino
		}
		inodes[i] = ino
		for _, m := range maps {
			if m.Inode == ino && m.Exec() && s.FileOffset >= m.Offset && s.FileOffset-m.Offset < m.End-m.Start {
				addrs[i] = append(addrs[i], m.Start+s.FileOffset-m.Offset)
			}
		}
	}
	return addrs, inodes, nil
}
