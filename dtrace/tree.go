package dtrace

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
)

// The tree option (-x tree=N, #pragma D option tree=N) prints the parse
// tree of each program compiled to stderr, as illumos's dt_node_printr
// does: N is a mask of compiler passes, bit 1 the tree as parsed, bit 2
// the tree once checked (each expression with its D type), bit 4 the tree
// as code generation takes it (with the constant value of each folded
// expression too).

// Tree passes (bits of the tree option).
const (
	treeParsed  = 1 << 0
	treeChecked = 1 << 1
	treeCodegen = 1 << 2
)

// dumpTrees prints ast at the passes the tree option names; info is the
// checker's result.
func dumpTrees(w io.Writer, mask int64, ast *syntax.Program, info *check.Info) {
	if mask <= 0 {
		return
	}
	for pass, bit := range []int64{treeParsed, treeChecked, treeCodegen} {
		if mask&bit == 0 {
			continue
		}
		var ti *check.Info
		if bit != treeParsed {
			ti = info
		}
		fmt.Fprintf(w, "parse tree, pass %d:\n", pass+1)
		writeTree(w, ast, ti, bit == treeCodegen)
	}
}

// writeTree writes one line a node, indented by depth: the node's kind,
// its own scalar fields (names, operators, literals) and, given info, an
// expression's type and, with values, its constant value.
func writeTree(w io.Writer, n syntax.Node, info *check.Info, values bool) {
	var b strings.Builder
	syntax.InspectDepth(n, func(n syntax.Node, depth int) bool {
		b.Reset()
		b.WriteString(strings.Repeat("  ", depth))
		v := reflect.ValueOf(n).Elem()
		b.WriteString(v.Type().Name())
		for i := 0; i < v.NumField(); i++ {
			if s := treeField(v.Type().Field(i), v.Field(i)); s != "" {
				b.WriteString(" " + s)
			}
		}
		if x, ok := n.(syntax.Expr); ok && info != nil {
			if tv, ok := info.Types[x]; ok && tv.Type != nil {
				fmt.Fprintf(&b, " (type=%v", tv.Type)
				if values && tv.Value != nil {
					if tv.Value.IsStr {
						b.WriteString(" value=" + strconv.Quote(tv.Value.Str))
					} else {
						fmt.Fprintf(&b, " value=%d", tv.Value.Int)
					}
				}
				b.WriteString(")")
			}
		}
		fmt.Fprintln(w, b.String())
		return true
	})
}

// treeField renders one field of a node worth showing: set strings,
// numbers, tokens and true flags (children and positions show
// elsewhere).
func treeField(f reflect.StructField, v reflect.Value) string {
	if !f.IsExported() || f.Anonymous || v.IsZero() {
		return ""
	}
	if s, ok := v.Interface().(fmt.Stringer); ok && v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface {
		return f.Name + "=" + strconv.Quote(s.String())
	}
	switch v.Kind() {
	case reflect.String:
		return f.Name + "=" + strconv.Quote(v.String())
	case reflect.Bool:
		return f.Name
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("%s=%v", f.Name, v.Interface())
	}
	return ""
}
