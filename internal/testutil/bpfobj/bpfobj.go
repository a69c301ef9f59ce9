// Package bpfobj lists BPF objects by id: the kernel's programs, maps and
// links (BPF_*_GET_NEXT_ID), and those one process holds descriptors for
// (/proc/PID/fdinfo). Tests use it to check that a process, killed or
// not, leaves nothing of its own behind while other processes load BPF
// programs of theirs.
package bpfobj

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

// Set is a set of BPF objects by kind and id.
type Set struct {
	Progs, Maps, Links map[uint32]bool
}

// NewSet returns an empty set.
func NewSet() Set {
	return Set{Progs: map[uint32]bool{}, Maps: map[uint32]bool{}, Links: map[uint32]bool{}}
}

// Empty reports whether s holds nothing.
func (s Set) Empty() bool { return len(s.Progs)+len(s.Maps)+len(s.Links) == 0 }

// Kernel lists every program, map and link the kernel has.
func Kernel() (Set, error) {
	s := NewSet()
	if err := addIDs(ebpf.ProgramGetNextID, s.Progs); err != nil {
		return s, err
	}
	if err := addIDs(ebpf.MapGetNextID, s.Maps); err != nil {
		return s, err
	}
	it := new(link.Iterator)
	defer it.Close()
	for it.Next() {
		s.Links[uint32(it.ID)] = true
	}
	return s, it.Err()
}

// addIDs adds to set every id that next (ebpf.ProgramGetNextID,
// ebpf.MapGetNextID) walks through.
func addIDs[ID ~uint32](next func(ID) (ID, error), set map[uint32]bool) error {
	for id := ID(0); ; {
		n, err := next(id)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		set[uint32(n)] = true
		id = n
	}
}

// WaitGone waits up to d for the kernel to free the objects of s (it
// frees them after an RCU grace period, not when the last descriptor
// closes) and returns, as Left does, those it still has then.
func (s Set) WaitGone(d time.Duration) ([]string, error) {
	deadline := time.Now().Add(d)
	for {
		kernel, err := Kernel()
		if err != nil {
			return nil, err
		}
		left := s.Left(kernel)
		if len(left) == 0 || time.Now().After(deadline) {
			return left, nil
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// FDInfo returns the fields of /proc/PID/fdinfo, a map per descriptor: a
// program's shows prog_type and prog_id, a map's map_id, a link's
// link_type, link_id and prog_id. A process that has gone has none.
func FDInfo(pid int) []map[string]string {
	dir := fmt.Sprintf("/proc/%d/fdinfo", pid)
	ents, _ := os.ReadDir(dir)
	var out []map[string]string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		f := map[string]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				f[k] = strings.TrimSpace(v)
			}
		}
		out = append(out, f)
	}
	return out
}

// AddHeld adds the objects process pid holds descriptors for, as its
// fdinfo shows them (prog_id, map_id, link_id). A process that has gone
// adds nothing.
func (s Set) AddHeld(pid int) {
	for _, f := range FDInfo(pid) {
		for k, set := range map[string]map[uint32]bool{"prog_id": s.Progs, "map_id": s.Maps, "link_id": s.Links} {
			if id, err := strconv.ParseUint(f[k], 10, 32); err == nil {
				set[uint32(id)] = true
			}
		}
	}
}

// Left returns, sorted, the objects of s that kernel still has ("prog
// 12", "link 7").
func (s Set) Left(kernel Set) []string {
	var out []string
	for _, kind := range []struct {
		name      string
		ids, kern map[uint32]bool
	}{{"prog", s.Progs, kernel.Progs}, {"map", s.Maps, kernel.Maps}, {"link", s.Links, kernel.Links}} {
		for id := range kind.ids {
			if kind.kern[id] {
				out = append(out, fmt.Sprintf("%s %d", kind.name, id))
			}
		}
	}
	sort.Strings(out)
	return out
}
