package codegen

import (
	"sort"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/program"
)

// This file places the program's variables: which ones the clauses use
// and where each lives (dt_gvars offsets, scratch slots for clause
// locals, key sizes of thread-locals and associative arrays).

// scanVars assigns storage to variables in a deterministic order.
func (g *gen) scanVars(clauses []Clause) {
	var vars []*Var
	seen := map[*Var]bool{}
	if d, ok := g.info.(DeclInfo); ok {
		// Declared variables have storage even where no clause uses
		// them, as in dtrace: a variable's offset does not depend on
		// which of the others the clauses use.
		for _, v := range d.Declared() {
			if !seen[v] {
				seen[v] = true
				vars = append(vars, v)
			}
		}
	}
	for _, c := range clauses {
		g.scanNode(c.Decl, &vars, seen)
	}
	g.assignVars(vars)
	for _, v := range vars {
		if v.Kind == VarFlow {
			// New flows take their ids from a counter among the
			// globals (8-byte aligned for its atomic add).
			g.flowIDOff = align8(g.gvarEnd)
			g.gvarEnd = g.flowIDOff + 8
			break
		}
	}
}

func (g *gen) scanNode(n syntax.Node, vars *[]*Var, seen map[*Var]bool) {
	syntax.InspectCode(n, func(n syntax.Node) bool {
		e, ok := n.(syntax.Expr)
		if !ok {
			return true
		}
		if v := g.info.VarOf(e); v != nil && !seen[v] {
			seen[v] = true
			*vars = append(*vars, v)
		}
		if x := g.info.Expand(e); x != nil {
			g.scanNode(x, vars, seen)
		}
		if xi, ok := g.info.(XlateInfo); ok {
			if m, ok := e.(*syntax.MemberExpr); ok {
				if val, _, _, ok := xi.XlateMember(m); ok && !g.scanned[val] {
					g.scanned[val] = true
					g.scanNode(val, vars, seen)
				}
			}
			if members, _, _, ok := xi.XlateOf(e); ok {
				for _, val := range members {
					if !g.scanned[val] {
						g.scanned[val] = true
						g.scanNode(val, vars, seen)
					}
				}
			}
		}
		return true
	})
}

// assignVars gives variables their storage.
func (g *gen) assignVars(vars []*Var) {
	sort.SliceStable(vars, func(i, j int) bool {
		if vars[i].Kind != vars[j].Kind {
			return vars[i].Kind < vars[j].Kind
		}
		return vars[i].ID < vars[j].ID
	})
	for _, v := range vars {
		size := g.storageSize(v.Type)
		switch v.Kind {
		case VarGlobal:
			if _, ok := g.gvars[v.ID]; !ok {
				slot, align := g.slot(v.Type)
				g.gvars[v.ID] = alignUp(g.gvarEnd, align)
				g.gvarEnd = g.gvars[v.ID] + slot
			}
		case VarClause:
			if _, ok := g.thisVars[v.ID]; !ok {
				slot, align := g.slot(v.Type)
				off := alignUp(g.thisEnd, align)
				g.thisVars[v.ID] = g.layout.Temps + off
				g.thisEnd = off + slot
			}
		case VarThread:
			g.tvarSize = max(g.tvarSize, align8(size))
			g.spec.Charged.DynVar = max(g.spec.Charged.DynVar, g.chargedSize(v.Type))
		case VarFlow:
			if _, ok := g.fvars[v.ID]; !ok {
				g.fvars[v.ID] = g.fvarEnd
				g.fvarEnd += align8(size)
			}
		case VarAssoc, VarTAssoc:
			g.assocValue = max(g.assocValue, align8(size))
			var k uint32
			for _, t := range v.Keys {
				k += g.keySize(t)
			}
			g.assocKey = max(g.assocKey, abi.AssocKeyTuple+k)
			g.spec.Charged.DynVar = max(g.spec.Charged.DynVar, g.chargedSize(v.Type))
			g.spec.Charged.Tuple = max(g.spec.Charged.Tuple, g.chargedTuple(v.Keys))
		}
	}
}

// slot is the size and alignment of a global or clause-local variable's
// storage, laid out as dtrace lays out its variables: integers and
// pointers in their own size and alignment, structs and unions 8-byte
// aligned, arrays aligned as their elements; a string holds strsize
// bytes, its NUL and the NULL flag (strBuf).
func (g *gen) slot(t *program.Type) (size, align uint32) {
	switch {
	case t == nil:
		return 8, 8
	case t.Kind == program.TString:
		return g.strBuf(), 8
	case t.Kind == program.TStruct:
		return t.Size, 8
	case t.Kind == program.TArray:
		_, align = g.slot(t.Elem)
		return t.Size, align
	}
	n := scalarSize(t)
	return n, n
}

// scalarSize is the number of bytes a scalar variable of type t stores:
// an integer of 1, 2 or 4 bytes its size, anything else 8.
func scalarSize(t *program.Type) uint32 {
	if t != nil && t.Kind == program.TInt {
		switch t.Size {
		case 1, 2, 4:
			return t.Size
		}
	}
	return 8
}

func alignUp(n, a uint32) uint32 {
	if a == 0 {
		return n
	}
	return (n + a - 1) / a * a
}

// storageSize is the number of bytes a value of t occupies in a variable.
func (g *gen) storageSize(t *program.Type) uint32 {
	if t == nil {
		return 8
	}
	switch t.Kind {
	case program.TString:
		return g.strBuf()
	case program.TInt, program.TPointer:
		return 8
	}
	return t.Size
}

// keySize is the size of one tuple item in a key: integers are widened
// to 8 bytes, strings take strBuf bytes.
func (g *gen) keySize(t *program.Type) uint32 {
	if t != nil && t.KeyWidth != 0 {
		return align8(t.KeyWidth)
	}
	if t != nil && byRef(t) {
		return align8(g.storageSize(t))
	}
	return 8
}

// chargedSize is the size dtrace-utils gives a dynamic variable of type t
// (its D size; a string strsize+1 bytes).
func (g *gen) chargedSize(t *program.Type) uint32 {
	switch {
	case t == nil:
		return 8
	case t.IsString():
		return uint32(g.opts.StrSize) + 1
	case t.Kind == program.TInt:
		return scalarSize(t)
	case t.Kind == program.TStruct || t.Kind == program.TArray:
		return t.Size
	}
	return 8
}

// chargedTuple is the size of a tuple of the given item types as
// dtrace-utils assembles it (dt_cg_arglist): a 4-byte variable id, each
// item (scalars aligned to their size, user symbols as a tgid and an
// address, strings strsize+1 bytes, other by-reference values their
// size) and the 8-byte thread key.
func (g *gen) chargedTuple(keys []*program.Type) uint32 {
	n := uint32(4)
	for _, t := range keys {
		switch {
		case t != nil && t.Stack != 0:
			n += g.keySize(t)
		case t != nil && t.Sym >= program.KindUSym:
			n = alignUp(n, 8) + 16
		case t != nil && t.Sym != program.KindNone:
			n = alignUp(n, 8) + 8
		case t != nil && (t.IsString() || byRef(t)):
			n += g.chargedSize(t)
		default:
			s := g.chargedSize(t)
			n = alignUp(n, s) + s
		}
	}
	return n + 8
}
