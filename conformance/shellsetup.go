package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultShellTimeout caps a shell test's time limit by default: the
// longest @@timeout of the corpus's shell tests is 200 s, which its
// machines needed, not ours.
const DefaultShellTimeout = 60 * time.Second

// OnlyKind keeps the shell tests of tests (shell true) or the D programs.
func OnlyKind(tests []*Test, shell bool) []*Test {
	var kept []*Test
	for _, t := range tests {
		if t.Shell == shell {
			kept = append(kept, t)
		}
	}
	return kept
}

// HasShell reports whether tests holds a shell test.
func HasShell(tests []*Test) bool {
	for _, t := range tests {
		if t.Shell {
			return true
		}
	}
	return false
}

// ShellSetup is what the shell tests share in one run: the directory they
// run in, the list of providers check_provider consults, and the flags
// runtest.sh hands them.
//
// The corpus is read-only and holds no programs, while the tests name
// their helpers by paths relative to the corpus root (test/triggers/NAME,
// test/utils/NAME, test/unittest/...). So the tests run in a root of our
// own: test/unittest mirrors the corpus's with a link per file (and adds
// the symbolic links of the original tree the copy lacks, such as .r.p
// filters shared by several tests), and test/triggers and test/utils hold
// links to the corpus's scripts beside the programs built from the
// corpus's C sources with the flags of its Build files; test/triggers
// also holds the scripts of ours the corpus lacks (ShellOptions.Triggers).
type ShellSetup struct {
	// Root is the directory the tests run in.
	Root string
	// CPPFlags is runtest.sh's test_cppflags: -DARCH_<arch> and, in
	// installed mode, the include directory of DTrace's <sys/sdt.h>.
	CPPFlags string
	// Include is ShellOptions.Include, for the tests' environment.
	Include string
	// Providers is the providers file check_provider greps: the second
	// column of dtrace -l, one name a line, sorted.
	Providers []byte
	// BuildErrors lists the triggers and utilities that did not build,
	// by their path under Root (test/triggers/NAME).
	BuildErrors map[string]error

	tmp         string       // parent of the tests' tmpdirs
	seq         atomic.Int64 // numbers the tmpdirs
	corePattern []byte       // the kernel's core_pattern before the run, to restore
}

// ShellOptions says where the pieces of a shell-test run are.
type ShellOptions struct {
	// Tmp is a directory of this run: Root and the tests' tmpdirs go in it.
	Tmp string
	// Corpus is the dtrace-utils directory.
	Corpus string
	// DTrace is the dtrace under test: it lists the providers and makes
	// the headers and objects of the USDT triggers (dtrace -h, -G).
	DTrace string
	// Include is the directory holding DTrace's sys/sdt.h, given to the
	// C compiler of triggers and tests with -I ("" for none).
	Include string
	// Arch is uname -m.
	Arch string
	// Links is the list of symbolic links the corpus copy lacks
	// (corpus-links.txt; "" for none).
	Links string
	// Triggers is the directory of our own trigger sources
	// (conformance/triggers; "" for none): its shell scripts (NAME.sh)
	// are installed executable in test/triggers, where the corpus has
	// no file of the name.
	Triggers string
}

// PrepareShell lays out the root the shell tests run in, builds the
// corpus's triggers and test utilities into it and lists dtrace's
// providers. A trigger that does not build is recorded in BuildErrors; the
// tests that need it fail as they would without it.
func PrepareShell(ctx context.Context, o ShellOptions) (*ShellSetup, error) {
	corpus, err := filepath.Abs(o.Corpus)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.Tmp, "shell")
	sh := &ShellSetup{
		Root:        filepath.Join(dir, "root"),
		tmp:         filepath.Join(dir, "tmp"),
		BuildErrors: map[string]error{},
	}
	for _, d := range []string{filepath.Join(sh.Root, "test"), sh.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	if err := mirrorTree(filepath.Join(corpus, unitDir), filepath.Join(sh.Root, unitDir)); err != nil {
		return nil, err
	}
	if err := addLinks(filepath.Join(sh.Root, unitDir), o.Links); err != nil {
		return nil, err
	}
	sh.CPPFlags = "-DARCH_" + o.Arch
	sh.Include = o.Include
	if o.Include != "" {
		sh.CPPFlags += " -I" + o.Include
	}
	for _, sub := range []string{"test/triggers", "test/utils"} {
		if err := sh.populate(ctx, filepath.Join(corpus, sub), sub, o); err != nil {
			return nil, err
		}
	}
	if err := installScripts(o.Triggers, filepath.Join(sh.Root, "test/triggers")); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, o.DTrace, "-l").Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("dtrace -l: %v", err)
	}
	sh.Providers = providerList(out)
	sh.coreDumps()
	return sh, nil
}

// coreDumps arranges core dumps as runtest.sh does: a core limit of
// 1,000,000 blocks for the tests (ulimit -c) and, run as root, the
// kernel's core_pattern set to "core", so that a process that dumps core
// leaves ./core (options/tst.core looks for it) until Close puts the
// pattern back.
func (sh *ShellSetup) coreDumps() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_CORE, &lim) == nil {
		lim.Cur = min(1000000*1024, lim.Max)
		_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &lim)
	}
	if os.Geteuid() != 0 {
		return
	}
	old, err := os.ReadFile(corePatternPath)
	if err != nil {
		return
	}
	if os.WriteFile(corePatternPath, []byte("core\n"), 0o644) == nil {
		sh.corePattern = old
	}
}

// corePatternPath is the kernel's core file name pattern.
const corePatternPath = "/proc/sys/kernel/core_pattern"

// Close undoes what PrepareShell changed outside its directory: the
// kernel's core_pattern.
func (sh *ShellSetup) Close() {
	if sh.corePattern != nil {
		_ = os.WriteFile(corePatternPath, sh.corePattern, 0o644)
		sh.corePattern = nil
	}
}

// mirrorTree makes dst a copy of the directory tree src whose files are
// symbolic links to src's: a tree of our own, to which the links the
// corpus copy lost can be added.
func mirrorTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return os.Symlink(path, filepath.Join(dst, rel))
	})
}

// addLinks adds to the tree under root the symbolic links listed in the
// file links ("path target" a line, # comments), where nothing of the
// name exists.
func addLinks(root, links string) error {
	if links == "" {
		return nil
	}
	data, err := os.ReadFile(links)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		path := filepath.Join(root, filepath.FromSlash(f[0]))
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		if err := os.Symlink(filepath.FromSlash(f[1]), path); err != nil {
			return err
		}
	}
	return nil
}

// providerList is runtest.sh's `dtrace -l | tail -n +2 | gawk '{print
// $2;}' | sort -u`.
func providerList(listing []byte) []byte {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(listing))
	sc.Buffer(nil, 1<<20)
	for first := true; sc.Scan(); first = false {
		if f := strings.Fields(sc.Text()); !first && len(f) >= 2 {
			seen[f[1]] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return b.Bytes()
}

// installScripts copies the shell scripts (*.sh) of the directory src
// ("" for none) into dst, executable, but for those of a name dst has: the
// corpus lacks some the tests run (test/triggers/doio.sh), which we write.
func installScripts(src, dst string) error {
	if src == "" {
		return nil
	}
	scripts, err := filepath.Glob(filepath.Join(src, "*.sh"))
	if err != nil {
		return err
	}
	for _, script := range scripts {
		path := filepath.Join(dst, filepath.Base(script))
		if _, err := os.Lstat(path); err == nil {
			continue
		}
		text, err := os.ReadFile(script)
		if err != nil {
			return err
		}
		if err := os.WriteFile(path, text, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// populate fills Root/sub from the corpus directory src: every file but C
// sources is linked, and the programs its Build file names are compiled.
func (sh *ShellSetup) populate(ctx context.Context, src, sub string, o ShellOptions) error {
	dst := filepath.Join(sh.Root, sub)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".c") || e.IsDir() {
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	vars, err := readBuildVars(filepath.Join(src, "Build"))
	if err != nil {
		return err
	}
	var names []string
	for _, list := range []string{"EXTERNAL_64BIT_TRIGGERS", "EXTERNAL_32BIT_TRIGGERS", "INTERNAL_64BIT_TRIGGERS", "INTERNAL_32BIT_TRIGGERS", "TEST_UTILS"} {
		names = append(names, strings.Fields(vars[list])...)
	}
	if sub == "test/utils" {
		// Oracle Linux's gcc, which dtrace-utils' tests are run with,
		// links executables at a fixed address (no default PIE, as
		// Debian's gcc has): cpc/ and profile-n/tst.args_user compare
		// the user PCs dtrace reports with workload_user's addresses
		// as objdump prints them.
		for _, name := range strings.Fields(vars["TEST_UTILS"]) {
			vars[name+"_LDFLAGS"] += " -no-pie"
		}
	}
	var build []string
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(src, name+".c")); err != nil {
			continue
		}
		if strings.Contains(vars[name+"_DEPS"], "build-") {
			// It links dtrace-utils' own libraries (libproc, libdtrace).
			continue
		}
		build = append(build, name)
	}
	for name, err := range buildEach(build, func(name string) error { return buildProgram(ctx, src, dst, name, vars, o) }) {
		sh.BuildErrors[sub+"/"+name] = err
	}
	return nil
}

// triggerCFlags are the flags of dtrace-utils' build for its programs,
// before a program's own (a later -O wins).
var triggerCFlags = []string{"-std=gnu99", "-D_GNU_SOURCE", "-O2", "-g"}

// buildProgram compiles src/NAME.c into dst/NAME with the Build file's
// NAME_CFLAGS, _LDFLAGS and _LIBS. A program with NAME_PROV has USDT
// probes: its header comes from dtrace -h of that provider file and its
// probes' object from dtrace -G, as dtrace-utils' build makes them.
func buildProgram(ctx context.Context, src, dst, name string, vars map[string]string, o ShellOptions) error {
	work, err := os.MkdirTemp(filepath.Dir(dst), "build-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	run := func(prog string, args ...string) error {
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			// The compiler's first error says why; the command line
			// follows for the curious.
			return fmt.Errorf("%s (%v)\n%s %s", firstError(out), err, prog, strings.Join(args, " "))
		}
		return nil
	}
	cflags := append([]string{}, triggerCFlags...)
	if o.Include != "" {
		cflags = append(cflags, "-I"+o.Include)
	}
	cflags = append(cflags, "-I"+work)
	// -Iuts/common is dtrace-utils' own <sys/sdt.h>: ours is o.Include.
	for _, f := range strings.Fields(vars[name+"_CFLAGS"]) {
		if !strings.HasPrefix(f, "-I") {
			cflags = append(cflags, f)
		}
	}
	source := filepath.Join(src, name+".c")
	if data, err := os.ReadFile(source); err == nil && symlinkText.Match(data) {
		// A symbolic link of the original tree, stored as a file
		// holding the name of its target.
		source = filepath.Join(src, strings.TrimSpace(string(data)))
	}
	obj := filepath.Join(work, name+".o")
	objs := []string{obj}
	if prov := vars[name+"_PROV"]; prov != "" {
		provPath := filepath.Join(src, prov)
		header := filepath.Join(work, strings.TrimSuffix(prov, ".d")+".h")
		if err := run(o.DTrace, "-h", "-s", provPath, "-o", header); err != nil {
			return err
		}
		if err := run("cc", append(append([]string{}, cflags...), "-c", "-o", obj, source)...); err != nil {
			return err
		}
		provObj := filepath.Join(work, name+"-prov.o")
		if err := run(o.DTrace, "-G", "-s", provPath, "-o", provObj, obj); err != nil {
			return err
		}
		objs = append(objs, provObj)
	} else if err := run("cc", append(append([]string{}, cflags...), "-c", "-o", obj, source)...); err != nil {
		return err
	}
	link := append([]string{}, cflags...)
	link = append(link, strings.Fields(vars[name+"_LDFLAGS"])...)
	link = append(link, "-o", filepath.Join(dst, name))
	link = append(link, objs...)
	link = append(link, strings.Fields(vars[name+"_LIBS"])...)
	return run("cc", link...)
}

// firstError is the first line of a compiler's output that says "error",
// or its first line.
func firstError(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// symlinkText is the whole text of a file that stands for a symbolic link
// to another C source.
var symlinkText = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.c\n?$`)

// makeRef is a $(NAME) reference in a Build file.
var makeRef = regexp.MustCompile(`\$\(([A-Za-z0-9_-]+)\)`)

// readBuildVars reads the simple variable assignments of a dtrace-utils
// Build file (NAME = ..., :=, +=, with backslash continuations), expanding
// $(NAME) references to variables set before. define blocks, rules and
// functions other than plain references are left out: the programs' names
// and flags are plain lists.
func readBuildVars(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	inDefine := false
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "define "):
			inDefine = true
			continue
		case t == "endef":
			inDefine = false
			continue
		case inDefine || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(line, "\t"):
			continue
		}
		var name, op, val string
		for _, o := range []string{"+=", ":=", "="} {
			if i := strings.Index(t, o); i > 0 {
				name, op, val = strings.TrimSpace(t[:i]), o, strings.TrimSpace(t[i+len(o):])
				break
			}
		}
		if name == "" || strings.ContainsAny(name, " $():") {
			continue
		}
		val = makeRef.ReplaceAllStringFunc(val, func(ref string) string {
			return vars[makeRef.FindStringSubmatch(ref)[1]]
		})
		if op == "+=" && vars[name] != "" {
			val = vars[name] + " " + val
		}
		vars[name] = val
	}
	return vars, nil
}
