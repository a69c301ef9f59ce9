package format

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

// Trace writes one trace() record as dtrace(1M) on Linux prints it.
// quiet is the quiet option (-q): values then print without padding.
// Integers are right-aligned in a width that depends on their size and
// sign; strings are left-aligned in 33 columns; other by-reference data
// (structs, arrays) is dumped in hex.
func (p *Printer) Trace(w io.Writer, v program.Value, quiet bool) error {
	var out string
	switch x := v.(type) {
	case program.Int:
		if p.RawBytes {
			var buf [8]byte
			binary.LittleEndian.PutUint64(buf[:], x.Bits)
			out = RawBytes(buf[:x.Size])
			break
		}
		out = traceInt(x, quiet)
	case program.String:
		switch {
		case p.RawBytes:
			// The whole string record: strsize bytes and the NUL.
			d := []byte(cString(x))
			if n := p.strSize() + 1; len(d) < n {
				d = append(d, make([]byte, n-len(d))...)
			}
			out = RawBytes(d)
		case quiet:
			out = cString(x)
		default:
			out = fmt.Sprintf("  %-33s", cString(x))
		}
	case program.Bytes:
		out = RawBytes(x.Data)
	case program.Stack:
		return p.PrintStack(w, x)
	case program.Sym:
		out = fmt.Sprintf("  %-50s", p.SymString(x))
	case program.Float:
		if quiet {
			out = fmt.Sprint(x.V)
		} else {
			out = fmt.Sprintf(" %19v", x.V)
		}
	case program.Verbatim:
		out = string(x)
	}
	_, err := io.WriteString(w, out)
	return err
}

func traceInt(x program.Int, quiet bool) string {
	var width int
	switch x.Size {
	case 1:
		width = 3
	case 2:
		width = 5
	case 4:
		width = 10
	default:
		width = 20
		if x.Signed {
			width = 19
		}
	}
	var s string
	if x.Signed {
		s = fmt.Sprint(x.Int64())
	} else {
		s = fmt.Sprint(x.Uint64())
	}
	if quiet {
		return s
	}
	return fmt.Sprintf(" %*s", width, s)
}

// RawBytes returns dtrace's hex dump of data (dt_print_rawbytes): a
// leading newline, a header row of column digits, then 16 bytes a row
// with their printable characters. Empty data dumps nothing.
func RawBytes(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + strings.Repeat(" ", 11))
	for i := 0; i < 16; i++ {
		b.WriteString("  ")
		b.WriteByte("0123456789abcdef"[i])
	}
	b.WriteString("  0123456789abcdef\n")
	for i := 0; i < len(data); i += 16 {
		fmt.Fprintf(&b, "     %5x:", i)
		j := i
		for ; j < i+16 && j < len(data); j++ {
			fmt.Fprintf(&b, " %02x", data[j])
		}
		for ; j%16 != 0; j++ {
			b.WriteString("   ")
		}
		b.WriteString("  ")
		for j = i; j < i+16 && j < len(data); j++ {
			c := data[j]
			if c < ' ' || c > '~' {
				c = '.'
			}
			b.WriteByte(c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Tracemem writes a tracemem() record: always a hex dump.
func Tracemem(w io.Writer, data []byte) error {
	_, err := io.WriteString(w, RawBytes(data))
	return err
}

// printable reports whether PrintBytes would take every byte of s as text.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isprint(c) && !isspace(c) && c != '\b' && c != '\a' {
			return false
		}
	}
	return true
}

// isprint and isspace are the C locale's classes.
func isprint(c byte) bool { return c >= ' ' && c <= '~' }
func isspace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// PrintBytes returns dtrace's text for by-reference data outside a format
// (dt_print_bytes), as used for aggregation keys: printable text ending
// in NULs prints as a string ("  %-*s", or bare when quiet), anything
// else as a hex dump.
func PrintBytes(data []byte, width int, quiet bool) string {
	if len(data) == 0 {
		return ""
	}
	i := 0
	for ; i < len(data); i++ {
		c := data[i]
		if isprint(c) || isspace(c) || c == '\b' || c == '\a' {
			continue
		}
		if c == 0 && i > 0 {
			j := i + 1
			for ; j < len(data); j++ {
				if data[j] != 0 {
					break
				}
			}
			if j != len(data) {
				break
			}
			if quiet {
				return string(data[:i])
			}
			return fmt.Sprintf("  %-*s", width, data[:i])
		}
		break
	}
	if i == len(data) {
		return fmt.Sprintf("  %-*s", width, data)
	}
	return RawBytes(data)
}

// Key returns the text of one aggregation key outside a format, as
// dtrace prints keys in printa() without a format and at exit
// (dt_print_datum): integers in a width that depends on their size
// (" %16lld", " %8d", " %5d", " %3d", the smaller ones read as
// unsigned bytes and shorts), strings and data through PrintBytes with
// width 50, symbols in "  %-50s", stacks as stacks.
func (p *Printer) Key(v program.Value) string { return string(p.AppendKey(nil, v, false)) }

// AppendKey appends the text Key returns for v to b; with packed, as
// dtrace prints keys above packed and histogram rows (aggpack, agghist):
// printable strings right-aligned in 16 columns. Integers and strings,
// the common keys, are appended without allocating.
func (p *Printer) AppendKey(b []byte, v program.Value, packed bool) []byte {
	switch x := v.(type) {
	case program.Int:
		switch x.Size {
		case 1:
			return AppendPadded(b, int64(uint8(x.Bits)), 3)
		case 2:
			return AppendPadded(b, int64(uint16(x.Bits)), 5)
		case 4:
			return AppendPadded(b, int64(int32(x.Bits)), 8)
		}
		return AppendPadded(b, int64(x.Bits), 16)
	case program.String:
		cs := string(x)
		if i := strings.IndexByte(cs, 0); i >= 0 {
			cs = cs[:i]
		}
		if cs != "" && printable(cs) {
			// What PrintBytes makes of it, without building the record.
			if packed {
				b = append(b, ' ')
				b = appendSpaces(b, 16-len(cs))
				return append(b, cs...)
			}
			b = append(b, "  "...)
			b = append(b, cs...)
			return appendSpaces(b, 50-len(cs))
		}
		size := p.strSize()
		d := []byte(cs)
		if len(d) < size {
			d = append(d, make([]byte, size-len(d))...)
		}
		return append(b, PrintBytes(d, 50, false)...)
	case program.Bytes:
		return append(b, PrintBytes(x.Data, 50, false)...)
	case program.Sym:
		return fmt.Appendf(b, "  %-50s", p.SymString(x))
	case program.Stack:
		var sb strings.Builder
		p.PrintStack(&sb, x)
		return append(b, sb.String()...)
	case program.Verbatim:
		return append(b, x...)
	case program.Float:
		return fmt.Appendf(b, " %16v", x.V)
	}
	return b
}

// AppendPadded appends " " and v right-aligned in width columns, as
// " %*lld" does.
func AppendPadded(b []byte, v int64, width int) []byte {
	var digits [24]byte
	d := strconv.AppendInt(digits[:0], v, 10)
	b = append(b, ' ')
	b = appendSpaces(b, width-len(d))
	return append(b, d...)
}

// appendSpaces appends n spaces (none when n <= 0).
func appendSpaces(b []byte, n int) []byte {
	const spaces = "                                                                "
	for n > 0 {
		k := min(n, len(spaces))
		b = append(b, spaces[:k]...)
		n -= k
	}
	return b
}

func (p *Printer) strSize() int {
	if p.StrSize > 0 {
		return p.StrSize
	}
	return 256
}
