package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUSDT32 builds a 32-bit program (gcc -m32) with a dtrace -h header
// and our <sys/sdt.h>: -G makes a 32-bit object for its objects and
// refuses 32- and 64-bit ones together; dtrace -c holds the program
// (evaltime's breakpoints on i386 registers) and its probes fire with
// their arguments (32-bit stapsdt notes).
func TestUSDT32(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for BPF")
	}
	if err := exec.Command("sh", "-c", "echo 'int main(void) { return 0; }' | gcc -m32 -x c -o /dev/null -").Run(); err != nil {
		t.Skip("gcc -m32 cannot build a program here (gcc-multilib)")
	}
	include, err := filepath.Abs(filepath.Join("..", "..", "include"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildDtrace(t)
	dir := t.TempDir()
	write := func(name, text string) { writeFile(t, dir, name, text) }
	write("bits.d", "provider bits {\n\tprobe work(int, char *);\n};\n")
	write("app.c", `#include "bits.h"
int main(int argc, char **argv) {
	for (int i = 0; i < 5; i++)
		if (BITS_WORK_ENABLED())
			BITS_WORK(i + argc, argv[0]);
	return 0;
}
`)
	run := func(wantErr bool, name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = withoutTesting(os.Environ())
		out, err := cmd.CombinedOutput()
		if (err != nil) != wantErr {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(false, bin, "-h", "-s", "bits.d")
	run(false, "gcc", "-m32", "-O2", "-I"+include, "-c", "-o", "app32.o", "app.c")
	run(false, "gcc", "-O2", "-I"+include, "-c", "-o", "app64.o", "app.c")
	if out := run(true, bin, "-G", "-s", "bits.d", "app32.o", "app64.o"); !strings.Contains(out, "one data model") {
		t.Errorf("-G of 32- and 64-bit objects: %s", out)
	}
	run(false, bin, "-G", "-s", "bits.d", "app32.o")
	if f, err := elf.Open(filepath.Join(dir, "bits.o")); err != nil || f.Class != elf.ELFCLASS32 || f.Machine != elf.EM_386 {
		t.Fatalf("-G of a 32-bit object: %v %+v", err, f)
	} else {
		f.Close()
	}
	run(false, "gcc", "-m32", "-o", "app", "app32.o", "bits.o")
	out := run(false, bin, "-qn", `bits$target:::work { printf("%d %s\n", arg0, copyinstr(arg1)); }`, "-c", "./app x")
	if want := "2 ./app\n3 ./app\n4 ./app\n5 ./app\n6 ./app\n"; strings.TrimSpace(out)+"\n" != want {
		t.Errorf("probes fired:\n%s\nwant\n%s", out, want)
	}
}
