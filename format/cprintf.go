package format

import (
	"math"
	"strconv"
	"strings"
)

// spec is one C printf conversion after dtrace assembled it: flags, a
// non-negative width, a precision (-1 when absent) and the C conversion
// character. The functions below reproduce glibc's output in the C locale.
type spec struct {
	alt, zero, left, plus, space bool
	width                        int
	prec                         int
	conv                         byte
}

func itoa(n int) string { return strconv.Itoa(n) }

// pad fits body into the field width; sign and prefix go before any
// zero padding.
func (s *spec) pad(sign, prefix, body string, zeroOK bool) string {
	n := len(sign) + len(prefix) + len(body)
	if n >= s.width {
		return sign + prefix + body
	}
	fill := s.width - n
	switch {
	case s.left:
		return sign + prefix + body + strings.Repeat(" ", fill)
	case s.zero && zeroOK:
		return sign + prefix + strings.Repeat("0", fill) + body
	}
	return strings.Repeat(" ", fill) + sign + prefix + body
}

// fmtInt formats an integer for d, i, u, o, x, X. neg and mag give the
// value as sign and magnitude (neg only for d and i).
func (s *spec) fmtInt(neg bool, mag uint64) string {
	var digits, prefix, sign string
	switch s.conv {
	case 'o':
		digits = strconv.FormatUint(mag, 8)
	case 'x':
		digits = strconv.FormatUint(mag, 16)
	case 'X':
		digits = strings.ToUpper(strconv.FormatUint(mag, 16))
	default:
		digits = strconv.FormatUint(mag, 10)
	}
	if s.prec == 0 && mag == 0 {
		digits = ""
	}
	if s.prec > len(digits) {
		digits = strings.Repeat("0", s.prec-len(digits)) + digits
	}
	switch s.conv {
	case 'o':
		if s.alt && !strings.HasPrefix(digits, "0") {
			digits = "0" + digits
		}
	case 'x':
		if s.alt && mag != 0 {
			prefix = "0x"
		}
	case 'X':
		if s.alt && mag != 0 {
			prefix = "0X"
		}
	case 'd', 'i':
		switch {
		case neg:
			sign = "-"
		case s.plus:
			sign = "+"
		case s.space:
			sign = " "
		}
	}
	return s.pad(sign, prefix, digits, s.prec < 0)
}

// fmtSigned formats v with %d/%i (or as unsigned for o, u, x, X).
func (s *spec) fmtSigned(v int64) string {
	if v < 0 {
		return s.fmtInt(true, uint64(-v))
	}
	return s.fmtInt(false, uint64(v))
}

// fmtStr formats a string for %s: precision truncates (in bytes).
func (s *spec) fmtStr(str string) string {
	if s.prec >= 0 && len(str) > s.prec {
		str = str[:s.prec]
	}
	return s.pad("", "", str, false)
}

// fmtChar formats %c.
func (s *spec) fmtChar(c byte) string {
	return s.pad("", "", string([]byte{c}), false)
}

// fmtFloat formats e, E, f, g, G.
func (s *spec) fmtFloat(v float64) string {
	sign := ""
	switch {
	case math.Signbit(v):
		sign = "-"
		v = -v
	case s.plus:
		sign = "+"
	case s.space:
		sign = " "
	}
	upper := s.conv == 'E' || s.conv == 'G'
	if math.IsInf(v, 0) || math.IsNaN(v) {
		body := "inf"
		if math.IsNaN(v) {
			body = "nan"
		}
		if upper {
			body = strings.ToUpper(body)
		}
		return s.pad(sign, "", body, false)
	}
	prec := s.prec
	if prec < 0 {
		prec = 6
	}
	var body string
	switch s.conv {
	case 'f', 'F':
		body = strconv.FormatFloat(v, 'f', prec, 64)
		if s.alt && prec == 0 {
			body += "."
		}
	case 'e', 'E':
		body = expForm(v, prec, s.alt)
	case 'g', 'G':
		p := prec
		if p == 0 {
			p = 1
		}
		e := strconv.FormatFloat(v, 'e', p-1, 64)
		x, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if p > x && x >= -4 {
			body = strconv.FormatFloat(v, 'f', p-1-x, 64)
			if s.alt {
				if !strings.Contains(body, ".") {
					body += "."
				}
			} else {
				body = trimFraction(body)
			}
		} else {
			body = expForm(v, p-1, s.alt)
			if !s.alt {
				i := strings.IndexByte(body, 'e')
				body = trimFraction(body[:i]) + body[i:]
			}
		}
	}
	if upper {
		body = strings.ToUpper(body)
	}
	return s.pad(sign, "", body, true)
}

// expForm is C's %e: at least two exponent digits.
func expForm(v float64, prec int, alt bool) string {
	b := strconv.FormatFloat(v, 'e', prec, 64)
	if alt && prec == 0 {
		i := strings.IndexByte(b, 'e')
		b = b[:i] + "." + b[i:]
	}
	return b
}

// trimFraction drops trailing zeros of a fraction and a bare point.
func trimFraction(b string) string {
	if !strings.Contains(b, ".") {
		return b
	}
	b = strings.TrimRight(b, "0")
	return strings.TrimSuffix(b, ".")
}
