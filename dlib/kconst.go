package dlib

import (
	"fmt"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// kernelConstants writes, in place of a library file's line
// "/* kernel: memory_cgrp_id memory_cgrp_v1 */", the running kernel's
// values of constants that differ between kernel configurations, read
// from its BTF through k (none known without it):
//
//   - memory_cgrp_id, the memory controller's index in a css_set's
//     subsys[] (enum cgroup_subsys_id: it moves with the controllers a
//     kernel is built with), and memory_cgrp_v1, 1 when the kernel has
//     the memory controller (0 then makes container.d look no further
//     than cgroup v2).
func kernelConstants(text string, k check.Kernel) string {
	i := strings.Index(text, "/* kernel: ")
	if i < 0 {
		return text
	}
	end := strings.Index(text[i:], "*/")
	if end < 0 {
		return text
	}
	id, ok := kernelEnum(k, "enum cgroup_subsys_id", "memory_cgrp_id")
	v1 := 0
	if ok {
		v1 = 1
	}
	decl := fmt.Sprintf("inline int memory_cgrp_id = %d; inline int memory_cgrp_v1 = %d;", id, v1)
	return text[:i] + decl + text[i+end+2:]
}

// kernelEnum is the value of the kernel enum's constant name.
func kernelEnum(k check.Kernel, enum, name string) (int64, bool) {
	if k == nil {
		return 0, false
	}
	e, ok := k.LookupType("", enum).(*types.Enum)
	if !ok {
		return 0, false
	}
	for _, v := range e.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}
