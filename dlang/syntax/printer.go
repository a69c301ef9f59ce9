package syntax

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Fprint writes a stable one-line-per-declaration text form of a node to
// w, for tests and debugging. Expressions print as S-expressions, e.g.
// (= x (+ y 1)); types print Go-style from the outside in, e.g. a
// declarator `*a[10]` of int prints as `a [10]*int`.
func Fprint(w io.Writer, n Node) error {
	var b strings.Builder
	pr := printer{&b}
	pr.node(n)
	_, err := io.WriteString(w, b.String())
	return err
}

// String returns the text Fprint writes for n.
func String(n Node) string {
	var b strings.Builder
	pr := printer{&b}
	pr.node(n)
	return b.String()
}

type printer struct {
	b *strings.Builder
}

func (p printer) printf(format string, args ...any) { fmt.Fprintf(p.b, format, args...) }

var tokenText = map[Token]string{
	ADD: "+", SUB: "-", MUL: "*", QUO: "/", REM: "%", AND: "&", OR: "|",
	XOR: "^", SHL: "<<", SHR: ">>", LAND: "&&", LOR: "||", LXOR: "^^",
	NOT: "!", BNEG: "~", INC: "++", DEC: "--", EQL: "==", NEQ: "!=",
	LSS: "<", GTR: ">", LEQ: "<=", GEQ: ">=", ASSIGN: "=", ADDASS: "+=",
	SUBASS: "-=", MULASS: "*=", QUOASS: "/=", REMASS: "%=", ANDASS: "&=",
	ORASS: "|=", XORASS: "^=", SHLASS: "<<=", SHRASS: ">>=", COMMA: ",",
}

// OpText returns the spelling of an operator token ("+=", "<<"), and
// false for any other token.
func OpText(t Token) (string, bool) {
	s, ok := tokenText[t]
	return s, ok
}

// String returns the token's spelling for operators, else its name.
func (t Token) String() string {
	if s, ok := tokenText[t]; ok {
		return s
	}
	switch t {
	case ILLEGAL:
		return "ILLEGAL"
	case EOF:
		return "EOF"
	case IDENT:
		return "IDENT"
	case INT:
		return "INT"
	case STRING:
		return "STRING"
	case PDESC:
		return "PDESC"
	case TNAME:
		return "TNAME"
	}
	for k, v := range keywords {
		if v == t {
			return k
		}
	}
	for k, v := range ops {
		if v == t {
			return k
		}
	}
	return "Token(" + strconv.Itoa(int(t)) + ")"
}

// form prints an S-expression: head and the nodes, in parentheses.
func (p printer) form(head string, nodes ...Node) {
	p.printf("(%s", head)
	for _, n := range nodes {
		p.printf(" ")
		p.node(n)
	}
	p.printf(")")
}

// exprs returns es as nodes.
func exprs(es []Expr) []Node {
	ns := make([]Node, len(es))
	for i, e := range es {
		ns[i] = e
	}
	return ns
}

func (p printer) node(n Node) {
	switch n := n.(type) {
	case nil:
		p.printf("nil")
	case *Program:
		for i, d := range n.Decls {
			if i > 0 {
				p.printf("\n")
			}
			p.node(d)
		}
	case *ProbeClause:
		p.printf("(clause")
		for _, d := range n.Descs {
			p.printf(" %q", d.Text)
		}
		if n.Pred != nil {
			p.printf(" /")
			p.node(n.Pred)
			p.printf("/")
		}
		if n.Body != nil {
			p.printf(" ")
			p.node(n.Body)
		}
		p.printf(")")
	case *PragmaDecl:
		p.printf("(#%s", n.Directive)
		for _, w := range n.Words {
			p.printf(" %s", w)
		}
		p.printf(")")
	case *Declaration:
		p.printf("(decl %s", p.specs(n.Specs))
		for _, d := range n.Decls {
			p.printf(" ")
			p.declarator(d)
		}
		p.printf(")")
	case *InlineDecl:
		p.printf("(inline %s ", p.specs(n.Specs))
		p.declarator(n.Decl)
		p.printf(" = ")
		p.node(n.Value)
		p.printf(")")
	case *TranslatorDecl:
		p.printf("(translator %s <%s ", p.typeName(n.Out), p.typeName(n.In))
		p.node(n.Param)
		p.printf(">")
		for _, m := range n.Members {
			p.printf(" (%s ", m.Name.Name)
			p.node(m.Value)
			p.printf(")")
		}
		p.printf(")")
	case *ProviderDecl:
		p.printf("(provider %s", n.Name.Name)
		for _, pr := range n.Probes {
			p.printf(" (probe %s %s", pr.Name.Name, p.params(pr.Params, false))
			if pr.XArgs != nil {
				p.printf(" : %s", p.params(pr.XArgs, false))
			}
			p.printf(")")
		}
		p.printf(")")

	case *BlockStmt:
		p.printf("{")
		for i, s := range n.List {
			if i > 0 {
				p.printf(" ")
			}
			p.node(s)
		}
		p.printf("}")
	case *ExprStmt:
		p.node(n.X)
		p.printf(";")
	case *EmptyStmt:
		p.printf(";")
	case *DeclStmt:
		p.node(n.Decl)
	case *IfStmt:
		p.printf("(if ")
		p.node(n.Cond)
		p.printf(" ")
		p.node(n.Then)
		if n.Else != nil {
			p.printf(" else ")
			p.node(n.Else)
		}
		p.printf(")")

	case *Ident:
		if n.Scoped {
			p.printf("%s`", n.Module)
		}
		p.printf("%s", n.Name)
	case *IntLit:
		p.printf("%s", n.Text)
	case *FloatLit:
		p.printf("%s", n.Text)
	case *StringLit:
		p.printf("%q", n.Value)
	case *ScopedVar:
		p.printf("%s->%s", n.Scope, n.Name.Name)
	case *MacroVar:
		if n.Quoted {
			p.printf("$")
		}
		p.printf("$%s", n.Name)
	case *AggExpr:
		if n.Keys == nil {
			p.printf("@%s", n.Name)
			break
		}
		p.form("@"+n.Name, exprs(n.Keys)...)
	case *UnaryExpr:
		op := n.Op.String()
		switch n.Op {
		case ADD, SUB, MUL, AND:
			op = "u" + op
		case INC, DEC:
			op = "pre" + op
		}
		p.form(op, n.X)
	case *PostfixExpr:
		p.form("post"+n.Op.String(), n.X)
	case *BinaryExpr:
		p.form(n.Op.String(), n.X, n.Y)
	case *AssignExpr:
		p.form(n.Op.String(), n.X, n.Y)
	case *CondExpr:
		p.form("?", n.Cond, n.X, n.Y)
	case *CastExpr:
		p.form("cast "+p.typeName(n.Type), n.X)
	case *SizeofExpr:
		if n.Type != nil {
			p.printf("(sizeof %s)", p.typeName(n.Type))
		} else {
			p.form("sizeof", n.X)
		}
	case *StringofExpr:
		p.form("stringof", n.X)
	case *OffsetofExpr:
		p.printf("(offsetof %s", p.typeName(n.Type))
		for _, m := range n.Member {
			p.printf(" %s", m.Name)
		}
		p.printf(")")
	case *XlateExpr:
		p.form("xlate "+p.typeName(n.Type), n.X)
	case *CallExpr:
		p.form("call", append([]Node{n.Fun}, exprs(n.Args)...)...)
	case *IndexExpr:
		p.form("index", append([]Node{n.X}, exprs(n.Index)...)...)
	case *MemberExpr:
		op := "."
		if n.Arrow {
			op = "->"
		}
		p.printf("(%s ", op)
		p.node(n.X)
		p.printf(" %s)", n.Name.Name)
	case *ParenExpr:
		p.form("paren", n.X)
	case *BadExpr:
		p.printf("(bad)")
	case *TypeName:
		p.printf("%s", p.typeName(n))
	default:
		p.printf("(%T)", n)
	}
}

// specs formats declaration specifiers: storage class, qualifiers, type.
func (p printer) specs(ds *DeclSpecs) string {
	if ds == nil {
		return "nil"
	}
	var w []string
	if ds.Class != NoClass {
		w = append(w, classNames[ds.Class])
	}
	w = append(w, QualNames(ds.Quals)...)
	if ds.Type != nil {
		w = append(w, p.typeSpec(ds.Type))
	}
	return strings.Join(w, " ")
}

// classNames are the storage classes' keywords.
var classNames = [...]string{Auto: "auto", Register: "register", Static: "static", Extern: "extern", Typedef: "typedef", Self: "self", This: "this"}

// QualNames returns the keywords of the qualifier bits q, in the order
// C writes them.
func QualNames(q int) []string {
	var w []string
	if q&Const != 0 {
		w = append(w, "const")
	}
	if q&Volatile != 0 {
		w = append(w, "volatile")
	}
	if q&Restrict != 0 {
		w = append(w, "restrict")
	}
	return w
}

func (p printer) typeSpec(t TypeSpec) string {
	switch t := t.(type) {
	case *BasicType:
		return strings.Join(t.Words, " ")
	case *NamedType:
		if t.Module != "" {
			return t.Module + "`" + t.Name
		}
		return t.Name
	case *StructType:
		s := "struct"
		if t.Union {
			s = "union"
		}
		if t.Tag != "" {
			s += " "
			if t.Module != "" {
				s += t.Module + "`"
			}
			s += t.Tag
		}
		if t.Defined {
			var fs []string
			for _, f := range t.Members {
				var ds []string
				for _, d := range f.Decls {
					ds = append(ds, p.declString(d))
				}
				if len(ds) == 0 { // an anonymous struct or union member
					fs = append(fs, p.specs(f.Specs))
					continue
				}
				fs = append(fs, p.specs(f.Specs)+" "+strings.Join(ds, ", "))
			}
			s += "{" + strings.Join(fs, "; ") + "}"
		}
		return s
	case *EnumType:
		s := "enum"
		if t.Tag != "" {
			s += " " + t.Tag
		}
		if t.Defined {
			var vs []string
			for _, e := range t.Values {
				v := e.Name.Name
				if e.Value != nil {
					v += "=" + String(e.Value)
				}
				vs = append(vs, v)
			}
			s += "{" + strings.Join(vs, ", ") + "}"
		}
		return s
	}
	return "?"
}

func (p printer) declString(d *Declarator) string {
	var b strings.Builder
	printer{&b}.declarator(d)
	return b.String()
}

// declarator prints `name derivations`, e.g. `a [10]*`, or `x : 3` for a
// bit-field.
func (p printer) declarator(d *Declarator) {
	if d.Name != nil {
		p.node(d.Name)
	} else {
		p.printf("_")
	}
	if d.Type != nil {
		p.printf(" %s", p.derivation(d.Type))
	}
	if d.BitField != nil {
		p.printf(" : ")
		p.node(d.BitField)
	}
}

// derivation formats a DeclType Go-style, outermost first.
func (p printer) derivation(t DeclType) string {
	var b strings.Builder
	for t != nil {
		switch d := t.(type) {
		case *PointerDecl:
			b.WriteString("*")
			for _, q := range QualNames(d.Quals) {
				b.WriteString(q + " ")
			}
			t = d.Elem
		case *ArrayDecl:
			b.WriteString("[")
			if d.Len != nil {
				b.WriteString(String(d.Len))
			}
			for i, k := range d.Keys {
				if i > 0 {
					b.WriteString(",")
				}
				if k.Decl != nil && k.Decl.Name != nil {
					b.WriteString(k.Decl.Name.Name + " ")
				}
				b.WriteString(p.typeName(k))
			}
			if d.Variadic {
				b.WriteString(",...")
			}
			b.WriteString("]")
			t = d.Elem
		case *FuncDecl:
			b.WriteString("func" + p.params(d.Params, d.Variadic))
			t = d.Elem
		default:
			return b.String() + "?"
		}
	}
	return b.String()
}

func (p printer) params(ps []*Param, variadic bool) string {
	var w []string
	for _, prm := range ps {
		s := p.derivationOf(prm.Decl) + p.specs(prm.Specs)
		if prm.Decl != nil && prm.Decl.Name != nil {
			s = prm.Decl.Name.Name + " " + s
		}
		w = append(w, s)
	}
	if variadic {
		w = append(w, "...")
	}
	return "(" + strings.Join(w, ", ") + ")"
}

func (p printer) derivationOf(d *Declarator) string {
	if d == nil || d.Type == nil {
		return ""
	}
	return p.derivation(d.Type)
}

// typeName formats a type name Go-style: derivations, then specifiers.
func (p printer) typeName(tn *TypeName) string {
	if tn == nil {
		return "nil"
	}
	return p.derivationOf(tn.Decl) + p.specs(tn.Specs)
}
