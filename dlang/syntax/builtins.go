package syntax

// builtinTypes are the type names D defines without any declaration: the
// LP64 typedefs of dtrace's "D" container (dt_open.c). Keywords such as
// int and string are not listed.
var builtinTypes = map[string]bool{
	"int8_t": true, "int16_t": true, "int32_t": true, "int64_t": true,
	"intptr_t": true, "ssize_t": true, "uint8_t": true, "uint16_t": true,
	"uint32_t": true, "uint64_t": true, "uchar_t": true, "ushort_t": true,
	"uint_t": true, "ulong_t": true, "u_longlong_t": true,
	"ptrdiff_t": true, "uintptr_t": true, "size_t": true, "id_t": true,
	"pid_t": true,
}

// IsBuiltinType reports whether name is one of D's predefined typedef
// names (int8_t ... uint64_t, size_t, uintptr_t, ...).
func IsBuiltinType(name string) bool { return builtinTypes[name] }
