package tracefs

import (
	"strings"
	"testing"
)

const writeFormat = `name: sys_enter_write
ID: 840
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:int __syscall_nr;	offset:8;	size:4;	signed:1;
	field:unsigned int fd;	offset:16;	size:8;	signed:0;
	field:const char * buf;	offset:24;	size:8;	signed:0;
	field:size_t count;	offset:32;	size:8;	signed:0;

print fmt: "fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx", ((unsigned long)(REC->fd)), ((unsigned long)(REC->buf)), ((unsigned long)(REC->count))
`

func TestParseFormat(t *testing.T) {
	f, err := ParseFormat(strings.NewReader(writeFormat))
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "sys_enter_write" || f.ID != 840 || len(f.Common) != 4 || len(f.Fields) != 4 {
		t.Fatalf("got %+v", f)
	}
	want := []Field{
		{"__syscall_nr", "int", 8, 4, true},
		{"fd", "unsigned int", 16, 8, false},
		{"buf", "const char *", 24, 8, false},
		{"count", "size_t", 32, 8, false},
	}
	for i, w := range want {
		if f.Fields[i] != w {
			t.Errorf("field %d = %+v, want %+v", i, f.Fields[i], w)
		}
	}
	if fl, ok := f.Field("common_pid"); !ok || fl.Offset != 4 || !fl.Signed {
		t.Errorf("common_pid = %+v, %v", fl, ok)
	}
}

func TestSplitDecl(t *testing.T) {
	tests := []struct{ decl, typ, name string }{
		{"unsigned long args[6]", "unsigned long[6]", "args"},
		{"__data_loc char[] comm", "__data_loc char[]", "comm"},
		{"const char *const * argv", "const char *const *", "argv"},
		{"struct landlock_ruleset_attr *const attr", "struct landlock_ruleset_attr *const", "attr"},
		{"u8 saddr[4][2]", "u8[4][2]", "saddr"},
	}
	for _, tt := range tests {
		typ, name, ok := splitDecl(tt.decl)
		if !ok || typ != tt.typ || name != tt.name {
			t.Errorf("splitDecl(%q) = %q, %q, %v", tt.decl, typ, name, ok)
		}
	}
	for _, bad := range []string{"", "int", "x[", "int 3x"} {
		if _, _, ok := splitDecl(bad); ok {
			t.Errorf("splitDecl(%q) succeeded", bad)
		}
	}
}
