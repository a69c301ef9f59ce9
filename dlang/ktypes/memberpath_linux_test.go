package ktypes

import (
	"os"
	"testing"
)

// TestMemberPath finds a member of a member (the ustack unwinder reads
// mm_struct.context.vdso, whose struct is an anonymous typedef) in the
// running kernel's BTF: the dotted offset is the sum of the two.
func TestMemberPath(t *testing.T) {
	raw, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skip(err)
	}
	ctx, err := MemberOffset(raw, "mm_struct", "context")
	if err != nil {
		t.Fatal(err)
	}
	vdso, err := MemberOffset(raw, "mm_struct", "context.vdso")
	if err != nil {
		t.Fatal(err)
	}
	if vdso <= ctx || vdso-ctx > 256 {
		t.Errorf("context at %d, context.vdso at %d", ctx, vdso)
	}
	if _, err := MemberOffset(raw, "mm_struct", "context.nosuch"); err == nil {
		t.Error("context.nosuch found")
	}
	if _, err := MemberOffset(raw, "vm_area_struct", "vm_start.x"); err == nil {
		t.Error("a member of an integer found")
	}
	for _, m := range [][2]string{{"vm_area_struct", "vm_start"}, {"vm_area_struct", "vm_pgoff"}, {"vm_area_struct", "vm_file"}, {"file", "f_inode"}, {"inode", "i_ino"}, {"inode", "i_sb"}, {"super_block", "s_dev"}} {
		off, err := MemberOffset(raw, m[0], m[1])
		t.Logf("%s.%s at %d (%v)", m[0], m[1], off, err)
		if err != nil {
			t.Error(err)
		}
	}
}
