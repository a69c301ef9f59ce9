package types

// IsVoid reports whether t is void.
func IsVoid(t Type) bool { return Underlying(t).Kind() == KindVoid }

// IsInteger reports whether t is an integer or enumeration type.
func IsInteger(t Type) bool {
	k := Underlying(t).Kind()
	return k == KindInt || k == KindEnum
}

// IsFloat reports whether t is a floating-point type.
func IsFloat(t Type) bool { return Underlying(t).Kind() == KindFloat }

// IsArith reports whether t is an arithmetic type (integer, enum, float).
func IsArith(t Type) bool { return IsInteger(t) || IsFloat(t) }

// IsPointer reports whether t is a pointer.
func IsPointer(t Type) bool { return Underlying(t).Kind() == KindPointer }

// IsString reports whether t is D's string type.
func IsString(t Type) bool { return Underlying(t).Kind() == KindString }

// IsArray reports whether t is a C array.
func IsArray(t Type) bool { return Underlying(t).Kind() == KindArray }

// IsStructOrUnion reports whether t is a struct or union.
func IsStructOrUnion(t Type) bool {
	k := Underlying(t).Kind()
	return k == KindStruct || k == KindUnion
}

// IsScalar reports whether t is a scalar in D's sense: an integer,
// enumeration or pointer (what a predicate, !, && and || accept).
func IsScalar(t Type) bool {
	k := Underlying(t).Kind()
	return k == KindInt || k == KindEnum || k == KindPointer || k == KindSymaddr || k == KindUsymaddr
}

// IsSigned reports whether t is a signed integer type (enums are signed).
func IsSigned(t Type) bool {
	switch u := Underlying(t).(type) {
	case *Basic:
		return u.Signed
	case *Enum:
		return true
	}
	return false
}

// IsCharArray reports whether t is an array of a character type, which D
// treats like a string in many places.
func IsCharArray(t Type) bool {
	a, ok := Underlying(t).(*Array)
	return ok && isChar(a.Elem)
}

// IsCharPointer reports whether t is a pointer to a character type.
func IsCharPointer(t Type) bool {
	p, ok := Underlying(t).(*Pointer)
	return ok && isChar(p.Elem)
}

// isChar reports whether t is a character type.
func isChar(t Type) bool {
	b, ok := Underlying(t).(*Basic)
	return ok && b.Char
}

// IsStringLike reports whether t is a string, a char array or a char pointer.
func IsStringLike(t Type) bool { return IsString(t) || IsCharArray(t) || IsCharPointer(t) }

// Elem returns the element type of a pointer or array, or nil.
func Elem(t Type) Type {
	switch u := Underlying(t).(type) {
	case *Pointer:
		return u.Elem
	case *Array:
		return u.Elem
	}
	return nil
}

// Identical reports whether a and b are the same type once typedefs and
// qualifiers are removed (qualifiers of pointed-to types are ignored too).
func Identical(a, b Type) bool {
	a, b = Underlying(a), Underlying(b)
	if a == b {
		return true
	}
	switch x := a.(type) {
	case *Basic:
		y, ok := b.(*Basic)
		return ok && x.K == y.K && x.Bytes == y.Bytes && x.Signed == y.Signed && x.Bits == y.Bits
	case *Pointer:
		y, ok := b.(*Pointer)
		return ok && Identical(x.Elem, y.Elem)
	case *Array:
		y, ok := b.(*Array)
		return ok && x.Len == y.Len && Identical(x.Elem, y.Elem)
	case *String:
		_, ok := b.(*String)
		return ok
	case *Struct:
		y, ok := b.(*Struct)
		// The same tag seen through two containers (a forward reference
		// and the definition) names the same type.
		return ok && x.Union == y.Union && x.Tag != "" && x.Tag == y.Tag && (!x.Complete || !y.Complete)
	case *Enum:
		y, ok := b.(*Enum)
		return ok && x.Tag != "" && x.Tag == y.Tag && (!x.Complete || !y.Complete)
	case *Func:
		y, ok := b.(*Func)
		if !ok || x.Variadic != y.Variadic || len(x.Params) != len(y.Params) || !Identical(x.Result, y.Result) {
			return false
		}
		for i := range x.Params {
			if !Identical(x.Params[i], y.Params[i]) {
				return false
			}
		}
		return true
	case *Special:
		y, ok := b.(*Special)
		return ok && x.K == y.K && x.Name == y.Name
	}
	return false
}

// Promote applies C's integer promotions: integer types narrower than int
// (and bit-fields, and enums) become int; other types are unchanged.
func Promote(t Type) Type {
	switch u := Underlying(t).(type) {
	case *Basic:
		if u.K == KindInt && (u.Bytes < 4 || u.Bits > 0) {
			if u.Bits == 32 && !u.Signed {
				return UnsignedInt
			}
			if u.Bits > 32 {
				if u.Signed {
					return Long
				}
				return UnsignedLong
			}
			return Int
		}
	case *Enum:
		return Int
	}
	return t
}

// ArithResult returns the type of a binary arithmetic operation on
// integers of types a and b as dtrace's dt_type_promote computes it:
// enums count as int and bit-fields are promoted, but narrower integers
// are not promoted to int; the operand of greater rank (width, then
// unsignedness) wins, so unsigned char + char is unsigned char. The
// original (possibly typedef) type is returned when it wins, as dtrace
// does.
func ArithResult(a, b Type) Type {
	pa, pb := arithOperand(a), arithOperand(b)
	ua, _ := Underlying(pa).(*Basic)
	ub, _ := Underlying(pb).(*Basic)
	if ua == nil || ub == nil {
		return pa
	}
	ra, rb := 2*ua.Bytes, 2*ub.Bytes
	if !ua.Signed {
		ra++
	}
	if !ub.Signed {
		rb++
	}
	if rb > ra {
		return pb
	}
	return pa
}

// arithOperand is an operand's type as dt_type_promote ranks it.
func arithOperand(t Type) Type {
	switch u := Underlying(t).(type) {
	case *Basic:
		if u.K == KindInt && u.Bits > 0 {
			return Promote(t)
		}
	case *Enum:
		return Int
	}
	return t
}
