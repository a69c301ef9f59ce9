package format

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/dtrace-go/dtrace/program"
)

// PrintStack writes a stack() or ustack() record as dtrace does outside
// a format: a newline, then one line per frame indented by the
// stackindent option. An empty user stack prints nothing.
func (p *Printer) PrintStack(w io.Writer, st program.Stack) error {
	var b bytes.Buffer
	p.writeStack(&b, st, p.indent(), nil)
	_, err := w.Write(b.Bytes())
	return err
}

func (p *Printer) indent() int {
	if p.StackIndent > 0 {
		return p.StackIndent
	}
	return DefaultStackIndent
}

// writeStack writes the frames; s, when not nil, is the %k conversion
// applied to each frame's text.
func (p *Printer) writeStack(b *bytes.Buffer, st program.Stack, indent int, s *spec) {
	if st.User && len(st.PCs) == 0 {
		return
	}
	b.WriteByte('\n')
	for i, pc := range st.PCs {
		if pc == 0 {
			break
		}
		b.WriteString(strings.Repeat(" ", indent))
		var text string
		if st.User {
			text = p.userFrame(st, i, pc)
		} else {
			text = p.addrString(pc)
		}
		if s != nil {
			text = s.fmtStr(text)
		}
		b.WriteString(text)
		b.WriteByte('\n')
		if st.User && i < len(st.Strs) && strings.HasPrefix(st.Strs[i], "@") {
			// A ustack helper annotation goes under its frame.
			b.WriteString(strings.Repeat(" ", indent))
			text = "  [ " + st.Strs[i][1:] + " ]"
			if s != nil {
				text = s.fmtStr(text)
			}
			b.WriteString(text)
			b.WriteByte('\n')
		}
	}
}

func (p *Printer) userFrame(st program.Stack, i int, pc uint64) string {
	if p.NoResolve {
		return p.noResolveString(st.PID, pc)
	}
	if p.Sym != nil {
		if obj, fn, off, ok := p.Sym.UserSym(st.PID, pc); ok {
			if fn == "" && i < len(st.Strs) && st.Strs[i] != "" && st.Strs[i][0] != '@' {
				return st.Strs[i]
			}
			return symOffString(path.Base(obj), fn, off, pc)
		}
	}
	if i < len(st.Strs) && st.Strs[i] != "" && st.Strs[i][0] != '@' {
		return st.Strs[i]
	}
	return fmt.Sprintf("0x%x", pc)
}
