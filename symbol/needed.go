package symbol

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// PendingModules returns the shared libraries the executable needs
// (DT_NEEDED, transitively) that the process has not mapped yet: a
// process created by dtrace -c is held right after exec, before the
// dynamic linker has loaded anything. Their Maps are empty; a uprobe on
// the file is installed by the kernel when the process maps it. Libraries
// are found as ld.so finds them: DT_RPATH, LD_LIBRARY_PATH of the
// process, DT_RUNPATH, /etc/ld.so.conf and the default directories.
//
// The answer is worked out once per snapshot: the pid and USDT
// providers and the unwinder each ask for it, description after
// description. A later snapshot (the process has mapped more since, or
// exec'd) works it out again.
func (p *Process) PendingModules() []*Module {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pendingDone {
		p.pending, p.pendingDone = p.pendingModules(), true
	}
	return p.pending
}

func (p *Process) pendingModules() []*Module {
	if p.Exe == "" {
		return nil
	}
	mapped := map[string]bool{}
	for _, mod := range p.Modules() {
		mapped[mod.Name] = true
		mapped[mod.Path] = true
	}
	env := processEnv(p.PID)
	// Paths are those of our mount namespace, as the uprobes want them.
	root := ""
	var out []*Module
	seen := map[string]bool{}
	queue := []string{p.Exe}
	// /etc/ld.so.conf is read when the first object needs a library
	// looked for, and once.
	var confDirs []string
	for len(queue) > 0 {
		obj := queue[0]
		queue = queue[1:]
		f, err := elf.Open(root + obj)
		if err != nil {
			continue
		}
		needed, _ := f.DynString(elf.DT_NEEDED)
		rpath, _ := f.DynString(elf.DT_RPATH)
		runpath, _ := f.DynString(elf.DT_RUNPATH)
		class, machine := f.Class, f.Machine
		f.Close()
		var dirs []string
		origin := path.Dir(obj)
		expand := func(list []string) {
			for _, l := range list {
				for _, d := range strings.Split(l, ":") {
					d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
					if d != "" {
						dirs = append(dirs, d)
					}
				}
			}
		}
		if len(runpath) == 0 {
			expand(rpath)
		}
		expand([]string{env["LD_LIBRARY_PATH"]})
		expand(runpath)
		if confDirs == nil {
			confDirs = append([]string{}, ldSoConfDirs(root)...)
		}
		dirs = append(dirs, confDirs...)
		dirs = append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
		for _, lib := range needed {
			if seen[lib] {
				continue
			}
			seen[lib] = true
			found := findLibrary(root, lib, dirs, class, machine)
			if found == "" {
				continue
			}
			queue = append(queue, found)
			if mapped[found] || mapped[path.Base(found)] {
				continue
			}
			out = append(out, &Module{Path: found, Name: path.Base(found)})
		}
	}
	return out
}

// findLibrary returns the real path (as /proc/PID/maps will show it) of
// the first file named lib in dirs that is an ELF object of the given
// class and machine.
func findLibrary(root, lib string, dirs []string, class elf.Class, machine elf.Machine) string {
	cands := dirs
	if strings.Contains(lib, "/") {
		cands = []string{""}
	}
	for _, d := range cands {
		p := path.Join(d, lib)
		real, err := filepath.EvalSymlinks(root + p)
		if err != nil {
			continue
		}
		// DT_NEEDED is the traced program's word: a name that is a FIFO
		// or a device would block or feed the reader forever.
		if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		f, err := elf.Open(real)
		if err != nil {
			continue
		}
		ok := f.Class == class && f.Machine == machine
		f.Close()
		if ok {
			return strings.TrimPrefix(real, root)
		}
	}
	return ""
}

// ldSoConfDirs returns the directories /etc/ld.so.conf lists, following
// its include lines.
func ldSoConfDirs(root string) []string {
	reads.ldSoConf.Add(1)
	var dirs []string
	seen := map[string]bool{}
	var read func(file string)
	read = func(file string) {
		if seen[file] {
			return
		}
		seen[file] = true
		b, err := os.ReadFile(root + file)
		if err != nil {
			return
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			l := strings.TrimSpace(string(line))
			if i := strings.IndexByte(l, '#'); i >= 0 {
				l = strings.TrimSpace(l[:i])
			}
			switch {
			case l == "":
			case strings.HasPrefix(l, "include "):
				pat := strings.TrimSpace(l[len("include "):])
				if !strings.HasPrefix(pat, "/") {
					pat = path.Join(path.Dir(file), pat)
				}
				matches, _ := filepath.Glob(root + pat)
				for _, m := range matches {
					read(strings.TrimPrefix(m, root))
				}
			default:
				dirs = append(dirs, l)
			}
		}
	}
	read("/etc/ld.so.conf")
	return dirs
}

// processEnv reads the environment of a process.
func processEnv(pid int) map[string]string {
	reads.environ.Add(1)
	env := map[string]string{}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return env
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return env
}
