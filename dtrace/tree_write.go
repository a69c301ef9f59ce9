// Writing -x tree's nodes as dt_node_printr() does (tree.go).

package dtrace

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
)

// tnLabels are the labels of the nodes written as "LABEL text (type,
// attributes and flags)" followed by their operands, one a line below.
var tnLabels = map[tnKind]string{tnIdent: "IDENT", tnSym: "SYMBOL", tnOp1: "OP1", tnOp2: "OP2",
	tnInline: "INLINE", tnMember: "MEMBER"}

// writeTnode writes n and its subtree at depth as dt_node_printr().
func writeTnode(w io.Writer, n *tnode, depth int) {
	ind := strings.Repeat("  ", depth)
	a := attrString(n.attr)
	buf := "type=<-1>"
	if n.typ != "" {
		buf = "type=<" + n.typ + ">"
	}
	buf += " attr=" + a + " flags="
	if n.flags == 0 {
		buf += "0"
	} else {
		var fs []string
		for i, name := range nfNames {
			if n.flags&(1<<i) != 0 {
				fs = append(fs, name)
			}
		}
		buf += strings.Join(fs, ",")
	}
	list := func(l []*tnode) {
		for i, k := range l {
			writeTnode(w, k, depth+1)
			if i < len(l)-1 {
				fmt.Fprintf(w, "%s,\n", ind)
			}
		}
	}
	kid := func(i int) {
		if i < len(n.kids) && n.kids[i] != nil {
			writeTnode(w, n.kids[i], depth+1)
		}
	}
	fmt.Fprint(w, ind)
	switch n.kind {
	case tnInt:
		fmt.Fprintf(w, "INT 0x%x (%s)\n", n.value, buf)
	case tnString:
		fmt.Fprintf(w, "STRING \"%s\" (%s)\n", escapeD(n.text), buf)
	case tnIdent, tnSym, tnOp1, tnOp2, tnInline, tnMember:
		fmt.Fprintf(w, "%s %s (%s)\n", tnLabels[n.kind], n.text, buf)
		for i := range n.kids {
			kid(i)
		}
	case tnVar:
		fmt.Fprintf(w, "VARIABLE %s%s (%s)\n", n.prefix, n.text, buf)
		if n.args != nil {
			fmt.Fprintf(w, "%s[\n", ind)
			list(n.args)
			fmt.Fprintf(w, "%s]\n", ind)
		}
	case tnType:
		fmt.Fprintf(w, "TYPE (%s)\n", buf)
	case tnFunc:
		fmt.Fprintf(w, "FUNC %s (%s)\n", n.text, buf)
		list(n.args)
	case tnOp3:
		fmt.Fprintf(w, "OP3 (%s)\n", buf)
		kid(0)
		fmt.Fprintf(w, "%s?\n", ind)
		kid(1)
		fmt.Fprintf(w, "%s:\n", ind)
		kid(2)
	case tnDexpr:
		fmt.Fprintf(w, "D EXPRESSION attr=%s\n", a)
		kid(0)
	case tnDfunc:
		fmt.Fprintf(w, "D PRODUCER attr=%s\n", a)
		kid(0)
	case tnAgg:
		fmt.Fprintf(w, "AGGREGATE @%s attr=%s [\n", n.text, a)
		list(n.args)
		fmt.Fprintf(w, "%s]\n", ind)
		if n.aggfun != nil {
			fmt.Fprintf(w, "%s=\n", ind)
			writeTnode(w, n.aggfun, depth+1)
		}
	case tnPdesc:
		fmt.Fprintf(w, "PDESC %s [0]\n", n.text)
	case tnClause:
		fmt.Fprintf(w, "CLAUSE attr=%s\n", a)
		for _, p := range n.pdescs {
			writeTnode(w, p, depth+1)
		}
		fmt.Fprintf(w, "%sCTXATTR %s\n", ind, attrString(n.ctxattr))
		if n.pred != nil {
			fmt.Fprintf(w, "%sPREDICATE /\n", ind)
			writeTnode(w, n.pred, depth+1)
			fmt.Fprintf(w, "%s/\n", ind)
		}
		fmt.Fprintf(w, "%sACTION\n", ind)
		for _, s := range n.args {
			writeTnode(w, s, depth+1)
		}
	case tnIf:
		// illumos' DT_NODE_IF (dtrace-utils has no if).
		fmt.Fprintf(w, "IF attr=%s CONDITION:\n", a)
		writeTnode(w, n.pred, depth+1)
		fmt.Fprintf(w, "%sIF BODY: \n", ind)
		for _, s := range n.args {
			writeTnode(w, s, depth+1)
		}
		if n.elses != nil {
			fmt.Fprintf(w, "%sIF ELSE: \n", ind)
			for _, s := range n.elses {
				writeTnode(w, s, depth+1)
			}
		}
	case tnXlator:
		fmt.Fprintf(w, "XLATOR (%s)%s\n", buf, n.text)
		for _, m := range n.args {
			writeTnode(w, m, depth+1)
		}
	case tnProbe:
		fmt.Fprintf(w, "PROBE %s\n", n.text)
	case tnProvider:
		fmt.Fprintf(w, "PROVIDER %s (decl)\n", n.text)
		for _, p := range n.args {
			writeTnode(w, p, depth+1)
		}
	case tnProg:
		fmt.Fprintf(w, "PROGRAM attr=%s\n", a)
		for _, c := range n.args {
			writeTnode(w, c, depth+1)
		}
	}
}

// attrString writes attributes as dtrace's dt_attr_str(): the initial
// of each stability and of the class.
func attrString(a check.Attr) string {
	const stability = "ipoxuesS"
	const class = "uCpgIc"
	if int(a.Name) < len(stability) && int(a.Data) < len(stability) && int(a.Class) < len(class) {
		return fmt.Sprintf("[%c/%c/%c]", stability[a.Name], stability[a.Data], class[a.Class])
	}
	return fmt.Sprintf("[%d/%d/%d]", a.Name, a.Data, a.Class)
}

// dEscapes are the characters strchr2esc() writes as a C escape.
var dEscapes = [256]string{'\a': `\a`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`, '\v': `\v`,
	'\\': `\\`, '"': `\"`}

// escapeD writes s with C escapes as dtrace's strchr2esc().
func escapeD(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case dEscapes[c] != "":
			b.WriteString(dEscapes[c])
		case c < ' ' || c >= 0x7f:
			b.WriteString(`\` + strconv.FormatInt(int64(c), 8))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
