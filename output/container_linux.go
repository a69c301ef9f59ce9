package output

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Containers names cgroups by id, for records stamped with their
// writer's cgroup (Record.Cgroup): the name is what zonename gives, the
// cgroup directory's last component ("docker-<id>.scope"), "global"
// for the root. It finds a cgroup by walking the cgroup v2 mount for the
// directory whose inode is the id, keeping what it found; a cgroup made
// since is found by a walk at most once a second.
type Containers struct {
	mu    sync.Mutex
	root  string            // the cgroup2 mount, "" if none
	names map[uint64]string // id → name
	paths map[uint64]string // id → path from the root
	last  time.Time
}

// NewContainers finds the cgroup v2 mount.
func NewContainers() *Containers {
	c := &Containers{names: map[uint64]string{}, paths: map[uint64]string{}}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ... mount-point ... - fstype source options
		w := strings.Fields(sc.Text())
		for i, x := range w {
			if x == "-" && i+1 < len(w) && w[i+1] == "cgroup2" && len(w) > 4 {
				c.root = w[4]
			}
		}
		if c.root != "" {
			break
		}
	}
	return c
}

// Name is the name of cgroup id ("" when it cannot be found), and its
// path from the hierarchy's root.
func (c *Containers) Name(id uint64) (name, path string) {
	if c == nil || id == 0 {
		return "", ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.names[id]; ok {
		return n, c.paths[id]
	}
	if c.root == "" || time.Since(c.last) < time.Second {
		return "", ""
	}
	c.last = time.Now()
	filepath.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Stat(p, &st) != nil {
			return nil
		}
		rel := strings.TrimPrefix(p, c.root)
		if rel == "" {
			c.names[st.Ino], c.paths[st.Ino] = "global", "/"
		} else {
			c.names[st.Ino], c.paths[st.Ino] = filepath.Base(p), rel
		}
		return nil
	})
	return c.names[id], c.paths[id]
}
