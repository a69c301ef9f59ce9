package format

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/dtrace-go/dtrace/program"
)

// DefaultStackIndent is dtrace's default indentation of stack frames.
const DefaultStackIndent = 14

// maxField bounds field widths and precisions: dtrace prints a field of
// ten million characters (the corpus's printf/tst.wide), and glibc fails
// beyond INT_MAX; we stop at 64 MiB rather than allocate gigabytes.
const maxField = 1 << 26

// Printer holds what output formatting needs beyond the values: symbol
// lookup and the options that change the text. The zero Printer prints
// addresses in hex and uses dtrace's defaults.
type Printer struct {
	// Sym resolves addresses; nil prints raw addresses.
	Sym Symbolizer
	// StackIndent is the stackindent option; 0 means the default (14).
	StackIndent int
	// Target is the pid of $target, used by %A for plain integers.
	Target int
	// RawBytes is the rawbytes option: trace() dumps every value in hex.
	RawBytes bool
	// StrSize is the strsize option (default 256); an empty string
	// aggregation key is dumped as StrSize zero bytes, as dtrace does.
	StrSize int
	// Location is the time zone for %Y and %T; nil means time.Local.
	Location *time.Location
	// NoResolve is the noresolve option: user addresses (uaddr(),
	// usym(), ustack() frames) print as the object and the offset into
	// its mapping, "libc.so.6:0x2a1ca", without symbol lookups.
	NoResolve bool
}

// UserMapper is a Symbolizer that also finds the mapping holding a user
// address, for the noresolve form: the mapped object's path and the
// mapping's start.
type UserMapper interface {
	UserMapping(pid int, addr uint64) (obj string, start uint64, ok bool)
}

var defaultPrinter = &Printer{}

// Print writes the formatted arguments with a default Printer.
// It is printf(): args hold, in order, the dynamic widths and precisions
// and the values of the conversions.
func (f *Format) Print(w io.Writer, args []program.Value) error {
	return defaultPrinter.Printf(w, f, args)
}

// Printf writes f with args as dtrace's printf() action does.
func (p *Printer) Printf(w io.Writer, f *Format, args []program.Value) error {
	return p.format(w, f, args, nil, false)
}

// Printa writes one aggregation tuple with a printa() format. keys are
// the tuple's key values (consumed by the non-%@ conversions, dynamic
// widths included); results holds the results of the aggregations being
// printed, in printa()'s argument order. With several aggregations each
// %@ takes the next result and extra %@ repeat the last.
func (p *Printer) Printa(w io.Writer, f *Format, keys []program.Value, results []program.Value) error {
	return p.format(w, f, keys, results, true)
}

// ErrArgs reports that a record holds fewer values than the format needs.
var ErrArgs = fmt.Errorf("format: too few values for the format string")

// bufs holds the buffers a conversion builds its text in: a stream of
// records formats without an allocation each.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (p *Printer) format(w io.Writer, f *Format, args, results []program.Value, printa bool) error {
	b := bufs.Get().(*bytes.Buffer)
	b.Reset()
	defer bufs.Put(b)
	cur := 0
	next := func() (program.Value, error) {
		if len(args) == 0 {
			return nil, ErrArgs
		}
		v := args[0]
		args = args[1:]
		return v, nil
	}
	for i := range f.Convs {
		c := &f.Convs[i]
		b.WriteString(c.Prefix)
		if c.info == nil {
			continue
		}
		if c.info.print == pPct {
			b.WriteByte('%')
			continue
		}
		width, prec := c.Width, c.Prec
		dynWidth := 0
		if c.Flags&FlagDynWidth != 0 {
			v, err := next()
			if err != nil {
				return err
			}
			width = int(int32(toInt(v).Int64()))
			dynWidth = width
		}
		if c.Flags&FlagDynPrec != 0 {
			v, err := next()
			if err != nil {
				return err
			}
			prec = int(int32(toInt(v).Int64()))
		}
		var v program.Value
		if c.Flags&FlagAgg != 0 {
			if !printa || len(results) == 0 {
				return ErrArgs
			}
			v = results[cur]
			if cur < len(results)-1 {
				cur++
			}
		} else {
			var err error
			if v, err = next(); err != nil {
				return err
			}
		}
		s := spec{
			alt:   c.Flags&FlagAlt != 0,
			zero:  c.Flags&FlagZero != 0,
			left:  width < 0 || c.Flags&FlagLeft != 0,
			plus:  c.Flags&FlagPlus != 0,
			space: c.Flags&FlagSpace != 0,
			width: width,
			prec:  -1,
			conv:  c.info.ofmt,
		}
		if s.width < 0 {
			s.width = -s.width
		}
		if prec > 0 {
			s.prec = prec
		}
		// Bound what a hostile format or value can make us allocate.
		s.width = min(s.width, maxField)
		s.prec = min(s.prec, maxField)
		if c.info.print == pStack {
			// dtrace indents the frames by the width of a left-aligned
			// %k and drops the width from each frame's format.
			indent := 0
			if dynWidth < 0 {
				indent = -dynWidth
			} else if c.Flags&FlagLeft != 0 {
				indent = width
			}
			if c.Flags&FlagLeft != 0 {
				s.width = 0
			}
			indent = min(indent, maxField)
			st, _ := v.(program.Stack)
			p.writeStack(b, st, indent, &s)
			continue
		}
		b.WriteString(p.conv(c.info, &s, v))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// toInt turns any scalar value into an Int.
func toInt(v program.Value) program.Int {
	switch x := v.(type) {
	case program.Int:
		return x
	case program.Sym:
		return program.U64(x.Addr)
	case program.Float:
		return program.I64(int64(x.V))
	}
	return program.Int{Size: 8}
}

// conv formats one value for one conversion.
func (p *Printer) conv(ci *convInfo, s *spec, v program.Value) string {
	// As in dtrace, the action that produced a value can override the
	// conversion: mod()/umod() print module names, and aggregation
	// histograms print themselves.
	switch x := v.(type) {
	case program.Verbatim:
		return string(x)
	case program.Sym:
		switch x.Kind {
		case program.KernelMod:
			s.conv = 's'
			return s.fmtStr(p.modString(x.Addr))
		case program.UserMod:
			s.conv = 's'
			return s.fmtStr(p.umodString(x.PID, x.Addr))
		}
	}
	switch ci.print {
	case pSint, pUint, pDint:
		n := toInt(v)
		kind := ci.print
		conv := s.conv
		if kind == pDint {
			if n.Signed {
				kind = pSint
			} else {
				kind = pUint
				conv = 'u'
			}
		}
		s.conv = conv
		if kind == pSint {
			sv := n.Int64()
			if n.Size < 8 {
				sv = int64(int32(sv))
			}
			if conv == 'c' {
				return s.fmtChar(byte(sv))
			}
			if conv == 'd' || conv == 'i' {
				return s.fmtSigned(sv)
			}
			if n.Size < 8 {
				return s.fmtInt(false, uint64(uint32(sv)))
			}
			return s.fmtInt(false, uint64(sv))
		}
		uv := n.Uint64()
		if conv == 'c' {
			return s.fmtChar(byte(uv))
		}
		if conv == 'd' || conv == 'i' {
			// An unsigned value under a signed C conversion.
			if n.Size < 8 {
				return s.fmtSigned(int64(int32(uint32(uv))))
			}
			return s.fmtSigned(int64(uv))
		}
		return s.fmtInt(false, uv)
	case pFloat:
		switch x := v.(type) {
		case program.Float:
			return s.fmtFloat(x.V)
		default:
			return s.fmtFloat(float64(toInt(v).Int64()))
		}
	case pAddr:
		return s.fmtStr(p.addrString(toInt(v).Uint64()))
	case pUaddr:
		if x, ok := v.(program.Sym); ok {
			return s.fmtStr(p.uaddrString(x.PID, x.Addr))
		}
		return s.fmtStr(p.uaddrString(p.Target, toInt(v).Uint64()))
	case pTime, pTime822:
		ns := int64(toInt(v).Uint64())
		loc := p.Location
		if loc == nil {
			loc = time.Local
		}
		t := time.Unix(ns/1e9, 0).In(loc)
		if ci.print == pTime {
			return s.fmtStr(t.Format("2006 Jan _2 15:04:05"))
		}
		y, _ := t.ISOWeek()
		return s.fmtStr(fmt.Sprintf("%s, %02d %s %d %s %s", t.Format("Mon"), t.Day(), t.Format("Jan"), y, t.Format("15:04:05"), t.Format("MST")))
	case pCstr:
		return s.fmtStr(cString(v))
	case pEstr:
		return s.fmtStr(escape(cString(v)))
	case pEchr:
		return s.fmtStr(escape(string([]byte{byte(toInt(v).Int64())})))
	case pWstr:
		return s.fmtStr(wideString(v))
	}
	return ""
}

// cString returns the C string held by a value.
func cString(v program.Value) string {
	switch x := v.(type) {
	case program.String:
		if i := strings.IndexByte(string(x), 0); i >= 0 {
			return string(x[:i])
		}
		return string(x)
	case program.Bytes:
		d := x.Data
		for i, c := range d {
			if c == 0 {
				d = d[:i]
				break
			}
		}
		return string(d)
	case program.Verbatim:
		return string(x)
	}
	return ""
}

// wideString decodes an array of 32-bit wide characters.
func wideString(v program.Value) string {
	b, ok := v.(program.Bytes)
	if !ok {
		return cString(v)
	}
	var sb strings.Builder
	for i := 0; i+4 <= len(b.Data); i += 4 {
		r := rune(uint32(b.Data[i]) | uint32(b.Data[i+1])<<8 | uint32(b.Data[i+2])<<16 | uint32(b.Data[i+3])<<24)
		if r == 0 {
			break
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// escapes are the letters of the C escapes that escape writes, by the
// byte escaped.
var escapes = [256]byte{'\a': 'a', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v', '"': '"', '\\': '\\'}

// escape is dtrace's strchr2esc: C escapes for control characters,
// quotes and backslashes, octal for other unprintable bytes.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0:
			b.WriteString(`\0`)
			return b.String()
		case escapes[c] != 0:
			b.WriteByte('\\')
			b.WriteByte(escapes[c])
		case c == ' ':
			b.WriteByte(' ')
		default:
			if c < '!' || c > '~' {
				b.WriteByte('\\')
				b.WriteByte('0' + (c>>6)&3)
				b.WriteByte('0' + (c>>3)&7)
				b.WriteByte('0' + c&7)
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// addrString is dtrace_addr2str: "mod`fn+0xoff", "mod`fn", "mod`0xaddr"
// or "0xaddr".
func (p *Printer) addrString(addr uint64) string {
	if p.Sym != nil {
		if mod, fn, off, ok := p.Sym.KernelSym(addr); ok {
			return symOffString(mod, fn, off, addr)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// symOffString names addr in module (or object) mod, inside function fn
// (none if "") at offset off: "mod`fn+0xoff", "mod`fn" or "mod`0xaddr".
func symOffString(mod, fn string, off, addr uint64) string {
	switch {
	case fn == "":
		return fmt.Sprintf("%s`0x%x", mod, addr)
	case off != 0:
		return fmt.Sprintf("%s`%s+0x%x", mod, fn, off)
	default:
		return mod + "`" + fn
	}
}

// symString is sym()'s text: the symbol without offset.
func (p *Printer) symString(addr uint64) string {
	if p.Sym != nil {
		if mod, fn, _, ok := p.Sym.KernelSym(addr); ok {
			if fn == "" {
				return fmt.Sprintf("%s`0x%x", mod, addr)
			}
			return mod + "`" + fn
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// modString is mod()'s text.
func (p *Printer) modString(addr uint64) string {
	if p.Sym != nil {
		if mod, _, _, ok := p.Sym.KernelSym(addr); ok {
			return mod
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// uaddrString is dtrace_uaddr2str.
func (p *Printer) uaddrString(pid int, addr uint64) string {
	if p.NoResolve {
		return p.noResolveString(pid, addr)
	}
	if p.Sym != nil && pid > 0 {
		if obj, fn, off, ok := p.Sym.UserSym(pid, addr); ok {
			return symOffString(path.Base(obj), fn, off, addr)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// noResolveString is a user address as dtrace_uaddr2str writes it under
// noresolve: the object's base name and the offset into the mapping
// that holds the address, or the bare address when no file is mapped
// there.
func (p *Printer) noResolveString(pid int, addr uint64) string {
	if m, ok := p.Sym.(UserMapper); ok && pid > 0 {
		if obj, start, ok := m.UserMapping(pid, addr); ok {
			return fmt.Sprintf("%s:0x%x", path.Base(obj), addr-start)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// umodString is umod()'s text.
func (p *Printer) umodString(pid int, addr uint64) string {
	if p.Sym != nil && pid > 0 {
		if obj, _, _, ok := p.Sym.UserSym(pid, addr); ok {
			return path.Base(obj)
		}
	}
	return fmt.Sprintf("0x%x", addr)
}

// SymString returns the text dtrace prints for a Sym outside a format
// (trace() and aggregation keys), before padding.
func (p *Printer) SymString(s program.Sym) string {
	switch s.Kind {
	case program.KernelSym:
		return p.symString(s.Addr)
	case program.KernelMod:
		return p.modString(s.Addr)
	case program.UserMod:
		return p.umodString(s.PID, s.Addr)
	case program.UserSym:
		// usym()/ufunc() print the symbol without its offset.
		if p.Sym != nil && s.PID > 0 && !p.NoResolve {
			if obj, fn, _, ok := p.Sym.UserSym(s.PID, s.Addr); ok && fn != "" {
				return path.Base(obj) + "`" + fn
			}
		}
	}
	return p.uaddrString(s.PID, s.Addr)
}
