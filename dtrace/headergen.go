package dtrace

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GenerateHeader is dtrace -h for one script: it writes the C header of
// the provider definitions in the D file script (see WriteHeader) to out,
// or, when out is "", to the script's base name with ".h" for ".d".
func GenerateHeader(script, out string) error {
	text, err := os.ReadFile(script)
	if err != nil {
		return fmt.Errorf("failed to open %s: %s", script, Strerror(err))
	}
	if out == "" {
		out = strings.TrimSuffix(filepath.Base(script), ".d") + ".h"
	}
	var b strings.Builder
	if err := WriteHeader(&b, Source{Name: script, Text: string(text), Script: true}, out); err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(b.String()), 0o666); err != nil {
		return fmt.Errorf("failed to write header %s: %s", out, Strerror(err))
	}
	return nil
}

// GenerateObject is dtrace -G: it writes the DOF (internal/dof) of the
// providers the script (the first -s file, "" for none) defines, with
// the sites of their probes that the objects objs hold (their
// <sys/sdt.h> notes, as dtrace -h headers make them), as illumos'
// dtrace -G does. With linktype "dof" the file is the raw DOF; with
// "elf" (the default) it is an ELF object whose .SUNW_dof section holds
// the DOF, made by the C compiler ($CC, else cc) from assembler source
// and passed through the linker (the ldpath option, else "ld") as
// dtrace does. The probes themselves need no link step: the usdt
// provider reads the notes. strip leaves out the DOF's non-loadable
// sections (its comment and utsname). The file is out, or, without
// out, x.o for a script x.d and d.out for anything else. The object is
// of the class of the program's objects: 32-bit (cc -m32) for i386
// objects; objects of both classes are refused, as by dtrace-utils.
// The linker's messages go to stderr.
func GenerateObject(script, out string, objs []string, opts *Options, stderr io.Writer) error {
	name := "d"
	if script != "" {
		name = strings.TrimSuffix(script, ".d")
	}
	if out == "" {
		// As dtrace names it: x.o for a script x.d, d.out otherwise
		// (/dev/stdin, a program given with -n).
		out = "d.out"
		if script != "" && strings.HasSuffix(script, ".d") {
			out = filepath.Base(name) + ".o"
		}
	}
	m32, err := objects32(objs)
	if err != nil {
		return fmt.Errorf("failed to link script %s: %v", name, err)
	}
	decls, err := readProviderDecls(script)
	if err != nil {
		return err
	}
	data, relocs, globals, err := buildDOF(decls, objs, !m32, opts.Strip)
	if err != nil {
		return fmt.Errorf("failed to link script %s: %v", name, err)
	}
	if opts.LinkType == "dof" {
		if err := os.WriteFile(out, data, 0o666); err != nil {
			return fmt.Errorf("failed to link script %s: failed to write %s: %s", name, out, Strerror(err))
		}
		return nil
	}
	tmp, err := os.MkdirTemp("", "dtrace-G")
	if err != nil {
		return fmt.Errorf("failed to link script %s: %v", name, err)
	}
	defer os.RemoveAll(tmp)
	obj := filepath.Join(tmp, "dof.o")
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	args := []string{"-c", "-x", "assembler", "-o", obj, "-"}
	if m32 {
		args = append([]string{"-m32"}, args...)
	}
	cmd := exec.Command(cc, args...)
	cmd.Stdin = strings.NewReader(dofAssembly(data, relocs, globals, !m32))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("failed to link script %s: %s: %v: %s", name, cc, err, strings.TrimSpace(string(msg)))
	}
	ld := opts.LdPath
	if ld == "" {
		ld = "ld"
	}
	emul := ""
	if m32 {
		emul = " -m elf_i386"
	}
	link := exec.Command("sh", "-c", ld+emul+` -r -o "$1" "$2"`, "sh", out, obj)
	link.Stdout, link.Stderr = stderr, stderr
	if err := link.Run(); err != nil {
		status := -1
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		}
		return fmt.Errorf("failed to link script %s: failed to link %s: %s exited with status %d", name, out, ld, status)
	}
	return nil
}

// objects32 reports whether the ELF objects objs are i386 ones (gcc
// -m32); objects of both classes are an error. Files that are not
// ELF objects are left to the linker.
func objects32(objs []string) (bool, error) {
	var first string
	var class elf.Class
	i386 := false
	for _, o := range objs {
		f, err := elf.Open(o)
		if err != nil {
			continue
		}
		c := f.Class
		i386 = f.Machine == elf.EM_386
		f.Close()
		if first == "" {
			first, class = o, c
		} else if c != class {
			return false, fmt.Errorf("%s is %d-bit, %s is %d-bit: the objects of one program must be of one data model",
				first, bits(class), o, bits(c))
		}
	}
	return class == elf.ELFCLASS32 && i386, nil
}

func bits(c elf.Class) int {
	if c == elf.ELFCLASS32 {
		return 32
	}
	return 64
}
