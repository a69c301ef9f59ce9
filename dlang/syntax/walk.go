package syntax

import "reflect"

// Inspect traverses the tree rooted at n in depth-first order, calling f
// for each node before its children. If f returns false, the node's
// children are skipped. nil children are not visited.
func Inspect(n Node, f func(Node) bool) {
	inspectDepth(n, 0, func(n Node, _ int) bool { return f(n) })
}

// InspectDepth is Inspect with each node's depth below n (0 for n).
func InspectDepth(n Node, f func(n Node, depth int) bool) {
	inspectDepth(n, 0, f)
}

func inspectDepth(n Node, depth int, f func(Node, int) bool) {
	if n == nil || isNilNode(n) || !f(n, depth) {
		return
	}
	for _, c := range children(n) {
		inspectDepth(c, depth+1, f)
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

// isNilNode reports whether n is a typed nil pointer in an interface
// (every node type is a pointer).
func isNilNode(n Node) bool {
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// nodes returns a list of nodes of one type as Nodes.
func nodes[T Node](list []T) []Node {
	out := make([]Node, len(list))
	for i, n := range list {
		out[i] = n
	}
	return out
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
		add(nodes(n.Decls)...)
	case *ProbeClause:
		add(nodes(n.Descs)...)
		expr(n.Pred)
		add(n.Body)
	case *Declaration:
		add(n.Specs)
		add(nodes(n.Decls)...)
	case *InlineDecl:
		add(n.Specs, n.Decl)
		if n.Decl == nil || n.Decl.Init != n.Value {
			expr(n.Value)
		}
	case *TranslatorDecl:
		add(n.Out, n.In, n.Param)
		add(nodes(n.Members)...)
	case *XlateMember:
		add(n.Name)
		expr(n.Value)
	case *ProviderDecl:
		add(n.Name)
		add(nodes(n.Probes)...)
	case *ProviderProbe:
		add(n.Name)
		add(nodes(n.Params)...)
		add(nodes(n.XArgs)...)
	case *DeclSpecs:
		add(n.Type)
	case *StructType:
		add(nodes(n.Members)...)
	case *Field:
		add(n.Specs)
		add(nodes(n.Decls)...)
	case *EnumType:
		add(nodes(n.Values)...)
	case *Enumerator:
		add(n.Name)
		expr(n.Value)
	case *Declarator:
		add(n.Name)
		add(n.Type)
		expr(n.BitField)
		expr(n.Init)
	case *PointerDecl:
		add(n.Elem)
	case *ArrayDecl:
		expr(n.Len)
		add(nodes(n.Keys)...)
		add(n.Elem)
	case *FuncDecl:
		add(nodes(n.Params)...)
		add(n.Elem)
	case *Param:
		add(n.Specs, n.Decl)
	case *TypeName:
		add(n.Specs, n.Decl)

	case *ExprStmt:
		expr(n.X)
	case *BlockStmt:
		add(nodes(n.List)...)
	case *IfStmt:
		expr(n.Cond)
		add(n.Then)
		add(n.Else)
	case *DeclStmt:
		add(n.Decl)

	case *ScopedVar:
		add(n.Name)
	case *AggExpr:
		add(nodes(n.Keys)...)
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
		add(nodes(n.Member)...)
	case *XlateExpr:
		add(n.Type)
		expr(n.X)
	case *CallExpr:
		expr(n.Fun)
		add(nodes(n.Args)...)
	case *IndexExpr:
		expr(n.X)
		add(nodes(n.Index)...)
	case *MemberExpr:
		expr(n.X)
		add(n.Name)
	case *ParenExpr:
		expr(n.X)
	}
	return out
}
