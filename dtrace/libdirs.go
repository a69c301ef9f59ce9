package dtrace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dtrace-go/dtrace/dlib"
)

// userLibraries reads the D library files of the -L directories (the
// libdir option) once: every *.d file of each directory, in an order
// where each file follows those it depends on (`#pragma D depends_on
// library X`, X a file of the same directory or of the system library).
// As in dtrace-utils, a dependency on a file that does not exist and a
// cycle of dependencies are errors; -x debug shows the order the files
// were sorted in.
func (h *Handle) userLibraries() ([]dlib.Source, error) {
	if h.userLibsDone {
		return h.userLibs, h.userLibsErr
	}
	h.userLibsDone = true
	h.userLibPaths = map[string]string{}
	system := map[string]bool{}
	for _, name := range dlib.Names() {
		system[name] = true
	}
	for _, dir := range h.opts.LibDirs {
		srcs, err := h.libraryDir(dir, system)
		if err != nil {
			h.userLibsErr = err
			return nil, err
		}
		h.userLibs = append(h.userLibs, srcs...)
	}
	return h.userLibs, nil
}

// libraryDir reads and sorts the library files of one directory (a
// directory that cannot be read is skipped, as dtrace does). Sources are
// named by their base names, the names depends_on uses; userLibPaths
// keeps their paths for messages.
func (h *Handle) libraryDir(dir string, system map[string]bool) ([]dlib.Source, error) {
	if _, err := os.Stat(dir); err != nil {
		h.debugf("skipping lib dir %s: %v", dir, err)
		return nil, nil
	}
	srcs, err := dlib.ReadDir(dir)
	if err != nil {
		h.debugf("skipping lib dir %s: %v", dir, err)
		return nil, nil
	}
	byName := map[string]int{}
	for i, s := range srcs {
		byName[s.Name] = i
		h.userLibPaths[s.Name] = filepath.Join(dir, s.Name)
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	// dependents[i] are the files that depend on file i.
	dependents := make([][]int, len(srcs))
	for i, s := range srcs {
		for _, d := range dlib.Dependencies(s.Text) {
			j, ok := byName[d]
			switch {
			case ok:
				dependents[j] = append(dependents[j], i)
			case system[d]:
			default:
				return nil, fmt.Errorf("Invalid library dependency in %s: %s", path(s.Name), path(d))
			}
		}
	}
	// A depth-first walk along dependents: a file finishes after every
	// file that depends on it, so the reverse of the finishing order puts
	// each file after its dependencies. An edge to a file that finishes
	// later than the file itself closes a cycle.
	start, finish := make([]int, len(srcs)), make([]int, len(srcs))
	clock := 0
	var sorted []dlib.Source
	var visit func(i int)
	visit = func(i int) {
		clock++
		start[i] = clock
		for _, j := range dependents[i] {
			if start[j] == 0 {
				visit(j)
			}
		}
		clock++
		finish[i] = clock
		h.debugf("library %s sorted (%d/%d)", path(srcs[i].Name), start[i], finish[i])
		sorted = append(sorted, srcs[i])
	}
	for i := range srcs {
		if start[i] == 0 {
			visit(i)
		}
	}
	for i := range srcs {
		for _, j := range dependents[i] {
			if finish[j] > finish[i] {
				return nil, fmt.Errorf("Cyclic dependency detected: %s => %s", path(srcs[i].Name), path(srcs[j].Name))
			}
		}
	}
	for l, r := 0, len(sorted)-1; l < r; l, r = l+1, r-1 {
		sorted[l], sorted[r] = sorted[r], sorted[l]
	}
	return sorted, nil
}

// userLibraryError reports the first file of the -L directories that did
// not compile, as dtrace-utils does, naming the file ("dir/x.d", line
// N: ...); a file left out because what it depends on is missing is
// skipped quietly.
func (h *Handle) userLibraryError() error {
	var drops []*dlib.DropError
	for _, err := range h.lib.Dropped {
		var de *dlib.DropError
		if errors.As(err, &de) && h.userLibPaths[de.Name] != "" {
			drops = append(drops, de)
		}
	}
	for _, de := range drops {
		ce, ok := h.compileError(de.Err).(*CompileError)
		if !ok || ce.Tag == "D_PRAGMA_DEPEND" {
			h.debugf("skipping library %s: %v", h.userLibPaths[de.Name], de.Err)
			continue
		}
		ce.File = h.userLibPaths[de.Name]
		return ce
	}
	return nil
}
