package codegen

import (
	"fmt"
	"math/rand"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/program"
)

// This file is the Go oracle of the differential tests: an evaluator of
// D integer expressions with C semantics written independently of the
// code generator, over Go's sized integer types.

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// normTo converts v to the integer type t and back to int64 bits.
func normTo(v int64, t *program.Type) int64 {
	switch {
	case t.Size == 1 && t.Signed:
		return int64(int8(v))
	case t.Size == 1:
		return int64(uint8(v))
	case t.Size == 2 && t.Signed:
		return int64(int16(v))
	case t.Size == 2:
		return int64(uint16(v))
	case t.Size == 4 && t.Signed:
		return int64(int32(v))
	case t.Size == 4:
		return int64(uint32(v))
	}
	return v
}

func arithT[T integer](op syntax.Token, a, b T) (T, bool) {
	switch op {
	case syntax.ADD:
		return a + b, true
	case syntax.SUB:
		return a - b, true
	case syntax.MUL:
		return a * b, true
	case syntax.QUO:
		if b == 0 {
			return 0, false
		}
		return a / b, true
	case syntax.REM:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case syntax.AND:
		return a & b, true
	case syntax.OR:
		return a | b, true
	case syntax.XOR:
		return a ^ b, true
	case syntax.SHL:
		return a << uint64(b), true
	case syntax.SHR:
		return a >> uint64(b), true
	}
	panic("op")
}

func cmpT[T integer](op syntax.Token, a, b T) bool {
	switch op {
	case syntax.EQL:
		return a == b
	case syntax.NEQ:
		return a != b
	case syntax.LSS:
		return a < b
	case syntax.GTR:
		return a > b
	case syntax.LEQ:
		return a <= b
	}
	return a >= b
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// eval computes e as DTrace does: every value is a 64-bit register,
// extended by its type where it is loaded (literals, variables, casts);
// operators work on the full 64 bits and never truncate; the result type
// picks signed or unsigned division, modulus and right shift, and the
// operand types pick signed or unsigned comparison. ok is false on
// division by zero.
func (ti *tinfo) eval(e syntax.Expr, args []uint64) (int64, bool) {
	t := ti.types[e]
	switch e := e.(type) {
	case *syntax.IntLit:
		return normTo(int64(e.Value), t), true
	case *syntax.ParenExpr:
		return ti.eval(e.X, args)
	case *syntax.Ident:
		v := ti.vars[e]
		return normTo(int64(args[v.Name[3]-'0']), t), true
	case *syntax.CastExpr:
		x, ok := ti.eval(e.X, args)
		return normTo(x, t), ok
	case *syntax.UnaryExpr:
		x, ok := ti.eval(e.X, args)
		switch e.Op {
		case syntax.SUB:
			return -x, ok
		case syntax.BNEG:
			return ^x, ok
		case syntax.NOT:
			return b2i(x == 0), ok
		}
		return x, ok
	case *syntax.CondExpr:
		c, ok := ti.eval(e.Cond, args)
		if !ok {
			return 0, false
		}
		if c != 0 {
			return ti.eval(e.X, args)
		}
		return ti.eval(e.Y, args)
	case *syntax.BinaryExpr:
		x, ok1 := ti.eval(e.X, args)
		switch e.Op {
		case syntax.LAND:
			if !ok1 || x == 0 {
				return 0, ok1
			}
			y, ok2 := ti.eval(e.Y, args)
			return b2i(y != 0), ok2
		case syntax.LOR:
			if !ok1 || x != 0 {
				return 1, ok1
			}
			y, ok2 := ti.eval(e.Y, args)
			return b2i(y != 0), ok2
		}
		y, ok2 := ti.eval(e.Y, args)
		if !ok1 || !ok2 {
			return 0, false
		}
		tx, ty := ti.types[e.X], ti.types[e.Y]
		switch e.Op {
		case syntax.LXOR:
			return b2i((x != 0) != (y != 0)), true
		case syntax.EQL, syntax.NEQ, syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ:
			// Both operands are integers: arith is dt_type_promote.
			if arith(tx, ty).Signed {
				return b2i(cmpT(e.Op, x, y)), true
			}
			return b2i(cmpT(e.Op, uint64(x), uint64(y))), true
		case syntax.REM:
			if y == 0 {
				return 0, false
			}
			if !t.Signed {
				return int64(uint64(x) % uint64(y)), true
			}
			// DTrace: the remainder of the magnitudes, negative when
			// exactly one operand is.
			ax, ay := uint64(x), uint64(y)
			if x < 0 {
				ax = -ax
			}
			if y < 0 {
				ay = -ay
			}
			r := int64(ax % ay)
			if (x < 0) != (y < 0) {
				r = -r
			}
			return r, true
		}
		if t.Signed {
			return arithT(e.Op, x, y)
		}
		r, ok := arithT(e.Op, uint64(x), uint64(y))
		return int64(r), ok
	}
	panic(fmt.Sprintf("eval %T", e))
}

var intTypes = []*program.Type{program.TypeChar, program.TypeUChar, program.TypeShort, program.TypeUShort, program.TypeInt, program.TypeUInt, program.TypeLong, program.TypeULong}

// randExpr builds a random integer expression over arg0..arg9.
func (ti *tinfo) randExpr(rnd *rand.Rand, depth int, args []*Var) syntax.Expr {
	if depth == 0 || rnd.Intn(4) == 0 {
		t := intTypes[rnd.Intn(len(intTypes))]
		if rnd.Intn(2) == 0 {
			return ti.lit(int64(rnd.Uint64())>>uint(rnd.Intn(64)), t)
		}
		return ti.cast(t, ti.variable(args[rnd.Intn(len(args))]))
	}
	x := ti.randExpr(rnd, depth-1, args)
	switch rnd.Intn(10) {
	case 0:
		ops := []syntax.Token{syntax.SUB, syntax.BNEG, syntax.NOT, syntax.ADD}
		return ti.un(ops[rnd.Intn(len(ops))], x)
	case 1:
		return ti.cast(intTypes[rnd.Intn(len(intTypes))], x)
	case 2:
		return ti.cond(ti.randExpr(rnd, depth-1, args), x, ti.randExpr(rnd, depth-1, args))
	case 3:
		// Shift counts stay within the promoted width (no undefined shifts).
		w := promote(ti.types[x]).Size * 8
		ops := []syntax.Token{syntax.SHL, syntax.SHR}
		return ti.bin(ops[rnd.Intn(2)], x, ti.lit(int64(rnd.Intn(int(w))), program.TypeInt))
	}
	ops := []syntax.Token{syntax.ADD, syntax.SUB, syntax.MUL, syntax.QUO, syntax.REM, syntax.AND, syntax.OR,
		syntax.XOR, syntax.EQL, syntax.NEQ, syntax.LSS, syntax.GTR, syntax.LEQ, syntax.GEQ,
		syntax.LAND, syntax.LOR, syntax.LXOR}
	return ti.paren(ti.bin(ops[rnd.Intn(len(ops))], x, ti.randExpr(rnd, depth-1, args)))
}

var opNames = map[syntax.Token]string{
	syntax.ADD: "+", syntax.SUB: "-", syntax.MUL: "*", syntax.QUO: "/", syntax.REM: "%",
	syntax.AND: "&", syntax.OR: "|", syntax.XOR: "^", syntax.SHL: "<<", syntax.SHR: ">>",
	syntax.LAND: "&&", syntax.LOR: "||", syntax.LXOR: "^^", syntax.NOT: "!", syntax.BNEG: "~",
	syntax.EQL: "==", syntax.NEQ: "!=", syntax.LSS: "<", syntax.GTR: ">", syntax.LEQ: "<=", syntax.GEQ: ">=",
}

// show prints an expression in D syntax with its types.
func (ti *tinfo) show(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.IntLit:
		return fmt.Sprintf("(%s)%d", ti.types[e].Name, int64(e.Value))
	case *syntax.Ident:
		return e.Name
	case *syntax.ParenExpr:
		return "(" + ti.show(e.X) + ")"
	case *syntax.CastExpr:
		return fmt.Sprintf("(%s)%s", ti.types[e].Name, ti.show(e.X))
	case *syntax.UnaryExpr:
		return opNames[e.Op] + ti.show(e.X)
	case *syntax.BinaryExpr:
		return ti.show(e.X) + " " + opNames[e.Op] + " " + ti.show(e.Y)
	case *syntax.CondExpr:
		return ti.show(e.Cond) + " ? " + ti.show(e.X) + " : " + ti.show(e.Y)
	}
	return fmt.Sprintf("%T", e)
}
