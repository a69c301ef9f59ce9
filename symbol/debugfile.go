package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// DebugDir is where separate debug files are installed (gdb's
// debug-file-directory): by build id under DebugDir/.build-id, where
// Debian's -dbgsym and libc6-dbg packages put them, and by the object's
// own path under DebugDir for .gnu_debuglink names.
var DebugDir = "/usr/lib/debug"

// maxDebugFile bounds the debug files read, and what a .gnu_debugdata
// section may expand to: the largest debug files distributions ship
// (a browser engine's) are a few GiB, and nothing above this is read.
const maxDebugFile = 8 << 30

// DebugFile returns the separate debug file of the ELF object at path
// (which holds its .symtab, its DWARF and often its .debug_frame), or ""
// when there is none. It looks where gdb does, in this order: by build id
// (DebugDir/.build-id/ab/cdef….debug, the file's own build id checked);
// by the .gnu_debuglink name (CRC checked) beside the object, in its
// .debug directory, and under DebugDir followed by the object's
// directory; then, with DEBUGINFOD_URLS set, in the debuginfod cache or
// from the servers (see docs/STACKS.md). The last may wait for the
// network, at most DEBUGINFOD_TIMEOUT for a server that does not
// answer; call it outside any latency-sensitive path. A path under
// /proc/PID/map_files is followed to the file the process mapped, for
// the debug link's directories.
func DebugFile(path string) string { return debugFileOf(path, true) }

// LocalDebugFile is DebugFile without debuginfod: the debug file only
// when it is on this machine already (by build id or debug link), so it
// never waits for the network.
func LocalDebugFile(path string) string { return debugFileOf(path, false) }

// debugFileOf opens the object at path for findDebugFile.
func debugFileOf(path string, remote bool) string {
	f, err := openELF(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return findDebugFile(f, path, remote)
}

// findDebugFile is DebugFile for an opened object; the debuginfod step
// runs only when remote is set.
func findDebugFile(f *elf.File, path string, remote bool) string {
	id := buildID(f)
	if p := buildIDFile(id); p != "" {
		return p
	}
	if s := f.Section(".gnu_debuglink"); s != nil && s.Type != elf.SHT_NOBITS && s.Size <= 4096 {
		if b, err := s.Data(); err == nil {
			if name, crc, err := parseDebugLink(b, f.ByteOrder); err == nil {
				seen, plain := objectName(path)
				if p := debugLinkFile(seen, plain, name, crc); p != "" {
					return p
				}
			}
		}
	}
	if remote && len(id) > 0 {
		if d := defaultDebuginfod(); d != nil {
			return d.find(hex.EncodeToString(id), path)
		}
	}
	return ""
}

// buildID returns the GNU build id of f, or nil.
func buildID(f *elf.File) []byte {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE || s.Size > 4096 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		notes, err := parseNotes(b, f.Class)
		if err != nil {
			continue
		}
		for _, n := range notes {
			// NT_GNU_BUILD_ID; ids are 8 to 64 bytes (20 for SHA-1).
			if n.Owner == "GNU" && n.Type == 3 && len(n.Desc) >= 2 && len(n.Desc) <= 64 {
				return n.Desc
			}
		}
	}
	return nil
}

// buildIDFile returns DebugDir/.build-id/ab/cdef….debug for build id id
// when that file exists and carries the same build id.
func buildIDFile(id []byte) string {
	if len(id) < 2 {
		return ""
	}
	h := hex.EncodeToString(id)
	p := filepath.Join(DebugDir, ".build-id", h[:2], h[2:]+".debug")
	if !sameBuildID(p, id) {
		return ""
	}
	return p
}

// sameBuildID reports whether the ELF file at path has build id id: a
// debug file left behind by an older package must not name the
// functions of a newer build.
func sameBuildID(path string, id []byte) bool {
	f, err := openELF(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return bytes.Equal(buildID(f), id)
}

// parseDebugLink splits a .gnu_debuglink section: a file name ending in
// a NUL, padding to a multiple of 4, then the CRC-32 of the debug file in
// the object's byte order. A name with a directory in it is refused: the
// object names a file to look for in known places, not a path.
func parseDebugLink(b []byte, order binary.ByteOrder) (name string, crc uint32, err error) {
	end := bytes.IndexByte(b, 0)
	if end <= 0 {
		return "", 0, errors.New("debug link without a name")
	}
	name = string(b[:end])
	at := (end + 4) &^ 3
	if at+4 > len(b) {
		return "", 0, errors.New("debug link without a CRC")
	}
	if strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return "", 0, errors.New("debug link names a path")
	}
	return name, order.Uint32(b[at:]), nil
}

// debugLinkFile looks for the debug link name of the object at path in
// gdb's places: beside the object, in its .debug subdirectory, and under
// DebugDir followed by the object's directory (plain, as the process
// names it). The file must have the CRC the link gives.
func debugLinkFile(path, plain, name string, crc uint32) string {
	dir := filepath.Dir(path)
	for _, p := range []string{
		filepath.Join(dir, name),
		filepath.Join(dir, ".debug", name),
		filepath.Join(DebugDir, filepath.Dir(plain), name),
	} {
		if same, err := sameFile(p, path); err != nil || same {
			continue
		}
		if c, err := fileCRC(p); err == nil && c == crc {
			return p
		}
	}
	return ""
}

// sameFile reports whether the two paths name one file (a debug link
// naming the object itself).
func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, nil
	}
	return os.SameFile(fa, fb), nil
}

// fileCRC is the CRC-32 (IEEE, as gnu_debuglink_crc32) of a regular
// file no larger than maxDebugFile.
func fileCRC(path string) (uint32, error) {
	if err := regular(path); err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if n, err := io.Copy(h, io.LimitReader(f, maxDebugFile+1)); err != nil || n > maxDebugFile {
		return 0, errors.New("unreadable or too large")
	}
	return h.Sum32(), nil
}

// Compiled when first used, not at package init: every start-up pays for init.
var (
	mapFilesPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/proc/([0-9]+)/map_files/[0-9a-f]+-[0-9a-f]+$`) })
	rootPath     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/proc/[0-9]+/root(/.*)$`) })
)

// objectName returns the paths by which a debug link's directories are
// found: seen, where this process finds the object's directory, and
// plain, the object's path as the traced process names it. A
// /proc/PID/map_files link is followed to the path the process mapped,
// seen through the process's root (its mount namespace).
func objectName(path string) (seen, plain string) {
	if m := rootPath().FindStringSubmatch(path); m != nil {
		return path, m[1]
	}
	m := mapFilesPath().FindStringSubmatch(path)
	if m == nil {
		return path, path
	}
	target, err := os.Readlink(path)
	if err != nil || !strings.HasPrefix(target, "/") {
		return path, path
	}
	target = strings.TrimSuffix(target, " (deleted)")
	if root := "/proc/" + m[1] + "/root" + target; fileExists(root) {
		return root, target
	}
	return target, target
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
