package symbol

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A perf map (/tmp/perf-PID.map) names code that a process generates
// at run time, one "START SIZE name" line (hexadecimal, "0x" optional)
// per function: what Node's --perf-basic-prof, Java's perf-map agents,
// Python 3.12's -X perf and other JITs write for perf(1). A function
// written later replaces what an earlier line said of the same bytes
// (a JIT reuses its code memory).

// perfSym is one function of a perf map.
type perfSym struct {
	Start, Size uint64
	Name        string
	line        int // later lines win over earlier ones
}

// maxPerfMap bounds the part of a perf map read: a long-running JIT
// writes a line per compiled function, and a map may grow for days.
const maxPerfMap = 512 << 20

// parsePerfMap reads a perf map; lines that do not parse are skipped, as
// perf skips them. The result is sorted by start address.
func parsePerfMap(r io.Reader) ([]perfSym, error) {
	var out []perfSym
	br := bufio.NewReaderSize(io.LimitReader(r, maxPerfMap), 64<<10)
	for n := 0; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A name longer than the buffer: skip the whole line.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 {
			if s, ok := parsePerfLine(line); ok {
				s.line = n
				out = append(out, s)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// parsePerfLine reads "START SIZE name".
func parsePerfLine(line []byte) (perfSym, bool) {
	line = bytes.TrimRight(line, "\r\n")
	f1, rest, ok := bytes.Cut(bytes.TrimLeft(line, " \t"), []byte{' '})
	if !ok {
		return perfSym{}, false
	}
	f2, name, ok := bytes.Cut(bytes.TrimLeft(rest, " \t"), []byte{' '})
	if !ok {
		return perfSym{}, false
	}
	start, err1 := parseHex(f1)
	size, err2 := parseHex(f2)
	name = bytes.TrimSpace(name)
	if err1 != nil || err2 != nil || len(name) == 0 || size == 0 || start+size < start {
		return perfSym{}, false
	}
	return perfSym{Start: start, Size: size, Name: string(name)}, true
}

func parseHex(b []byte) (uint64, error) {
	s := string(b)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	return strconv.ParseUint(s, 16, 64)
}

// lookupPerfSym returns the function of syms (sorted, as parsePerfMap
// returns them) that contains addr: of those that do, the one written
// last.
func lookupPerfSym(syms []perfSym, addr uint64) (perfSym, bool) {
	i := sort.Search(len(syms), func(i int) bool { return syms[i].Start > addr })
	var best perfSym
	found := false
	// Overlaps are rare (reused code memory): look back a little.
	for j := i - 1; j >= 0 && i-j <= 64; j-- {
		s := syms[j]
		if addr-s.Start < s.Size && (!found || s.line > best.line) {
			best, found = s, true
		}
	}
	return best, found
}

// perfMap is one process's perf map as last read.
type perfMap struct {
	mu    sync.Mutex
	path  string
	size  int64
	mtime time.Time
	read  time.Time
	syms  []perfSym
}

// perfMapPaths returns where the perf map of process pid may be: its
// own /tmp under its root, named by its pid in its own pid namespace,
// then this namespace's /tmp/perf-PID.map.
func perfMapPaths(pid int) []string {
	var out []string
	if ns := nsPID(pid); ns != 0 && ns != pid {
		out = append(out, fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, ns))
	}
	return append(out, fmt.Sprintf("/tmp/perf-%d.map", pid))
}

// nsPID returns pid's number in its innermost pid namespace (the last
// NSpid of /proc/PID/status), or 0.
func nsPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "NSpid:" {
			n, _ := strconv.Atoi(f[len(f)-1])
			return n
		}
	}
	return 0
}

// lookup names addr from the map, reading it again when it has changed
// since the last read (JITs append as they compile) and that read is
// not brand new.
func (m *perfMap) lookup(pid int, addr uint64) (perfSym, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := lookupPerfSym(m.syms, addr); ok {
		return s, true
	}
	if time.Since(m.read) < 50*time.Millisecond {
		return perfSym{}, false
	}
	m.read = time.Now()
	for _, p := range perfMapPaths(pid) {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || !trustedPerfMap(pid, fi) {
			continue
		}
		if p == m.path && fi.Size() == m.size && fi.ModTime().Equal(m.mtime) {
			break
		}
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		syms, err := parsePerfMap(f)
		f.Close()
		if err != nil {
			continue
		}
		m.path, m.size, m.mtime, m.syms = p, fi.Size(), fi.ModTime(), syms
		break
	}
	return lookupPerfSym(m.syms, addr)
}

// trustedPerfMap accepts a perf map owned by root or by the process's
// owner, as perf does: anyone may write a file of that name in /tmp.
func trustedPerfMap(pid int, fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	if st.Uid == 0 {
		return true
	}
	var ps syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &ps); err != nil {
		return false
	}
	return ps.Uid == st.Uid
}
