package syntax

// Inspect traverses the tree rooted at n in depth-first order, calling f
// for each node before its children. If f returns false, the node's
// children are skipped. nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || isNilNode(n) || !f(n) {
		return
	}
	for _, c := range children(n) {
		Inspect(c, f)
	}
}

// InspectCode is Inspect over the code of a tree only: it does not enter
// type names (of casts, sizeof, offsetof, xlate) or declaration
// statements, whose expressions are not evaluated when a clause runs.
func InspectCode(n Node, f func(Node) bool) {
	Inspect(n, func(n Node) bool {
		switch n.(type) {
		case *TypeName, *DeclStmt:
			return false
		}
		return f(n)
	})
}

// isNilNode reports whether n is a typed nil pointer in an interface.
func isNilNode(n Node) bool {
	switch n := n.(type) {
	case *Ident:
		return n == nil
	case *BlockStmt:
		return n == nil
	case *DeclSpecs:
		return n == nil
	case *Declarator:
		return n == nil
	case *TypeName:
		return n == nil
	case *Declaration:
		return n == nil
	}
	return false
}

// children returns the direct children of n in source order.
func children(n Node) []Node {
	var out []Node
	add := func(cs ...Node) {
		for _, c := range cs {
			if c != nil && !isNilNode(c) {
				out = append(out, c)
			}
		}
	}
	expr := func(x Expr) {
		if x != nil {
			out = append(out, x)
		}
	}
	switch n := n.(type) {
	case *Program:
		for _, d := range n.Decls {
			add(d)
		}
	case *ProbeClause:
		for _, d := range n.Descs {
			add(d)
		}
		expr(n.Pred)
		add(n.Body)
	case *Declaration:
		add(n.Specs)
		for _, d := range n.Decls {
			add(d)
		}
	case *InlineDecl:
		add(n.Specs, n.Decl)
		if n.Decl == nil || n.Decl.Init != n.Value {
			expr(n.Value)
		}
	case *TranslatorDecl:
		add(n.Out, n.In, n.Param)
		for _, m := range n.Members {
			add(m)
		}
	case *XlateMember:
		add(n.Name)
		expr(n.Value)
	case *ProviderDecl:
		add(n.Name)
		for _, p := range n.Probes {
			add(p)
		}
	case *ProviderProbe:
		add(n.Name)
		for _, p := range n.Params {
			add(p)
		}
		for _, p := range n.XArgs {
			add(p)
		}
	case *DeclSpecs:
		if n.Type != nil {
			add(n.Type)
		}
	case *StructType:
		for _, f := range n.Members {
			add(f)
		}
	case *Field:
		add(n.Specs)
		for _, d := range n.Decls {
			add(d)
		}
	case *EnumType:
		for _, e := range n.Values {
			add(e)
		}
	case *Enumerator:
		add(n.Name)
		expr(n.Value)
	case *Declarator:
		add(n.Name)
		if n.Type != nil {
			add(n.Type)
		}
		expr(n.BitField)
		expr(n.Init)
	case *PointerDecl:
		if n.Elem != nil {
			add(n.Elem)
		}
	case *ArrayDecl:
		expr(n.Len)
		for _, k := range n.Keys {
			add(k)
		}
		if n.Elem != nil {
			add(n.Elem)
		}
	case *FuncDecl:
		for _, p := range n.Params {
			add(p)
		}
		if n.Elem != nil {
			add(n.Elem)
		}
	case *Param:
		add(n.Specs, n.Decl)
	case *TypeName:
		add(n.Specs, n.Decl)

	case *ExprStmt:
		expr(n.X)
	case *BlockStmt:
		for _, s := range n.List {
			add(s)
		}
	case *IfStmt:
		expr(n.Cond)
		add(n.Then)
		if n.Else != nil {
			add(n.Else)
		}
	case *DeclStmt:
		add(n.Decl)

	case *ScopedVar:
		add(n.Name)
	case *AggExpr:
		for _, k := range n.Keys {
			expr(k)
		}
	case *UnaryExpr:
		expr(n.X)
	case *PostfixExpr:
		expr(n.X)
	case *BinaryExpr:
		expr(n.X)
		expr(n.Y)
	case *AssignExpr:
		expr(n.X)
		expr(n.Y)
	case *CondExpr:
		expr(n.Cond)
		expr(n.X)
		expr(n.Y)
	case *CastExpr:
		add(n.Type)
		expr(n.X)
	case *SizeofExpr:
		add(n.Type)
		expr(n.X)
	case *StringofExpr:
		expr(n.X)
	case *OffsetofExpr:
		add(n.Type)
		for _, m := range n.Member {
			add(m)
		}
	case *XlateExpr:
		add(n.Type)
		expr(n.X)
	case *CallExpr:
		expr(n.Fun)
		for _, a := range n.Args {
			expr(a)
		}
	case *IndexExpr:
		expr(n.X)
		for _, i := range n.Index {
			expr(i)
		}
	case *MemberExpr:
		expr(n.X)
		add(n.Name)
	case *ParenExpr:
		expr(n.X)
	}
	return out
}
