package aggregate

import (
	"io"
	"unicode/utf8"
)

// textWriter is what the histogram and row writers write to: a
// strings.Builder for a histogram returned as text, the printer's
// outBuf for printa().
type textWriter interface {
	io.Writer
	io.StringWriter
	io.ByteWriter
	WriteRune(r rune) (int, error)
}

// outChunk is how much printed text outBuf holds before passing it on:
// an aggregation of a million keys goes out in pieces instead of one
// buffer the size of its text.
const outChunk = 64 << 10

// outBuf collects printa()'s text in a buffer kept from call to call and
// passes it to w in chunks.
type outBuf struct {
	b   []byte
	w   io.Writer
	err error
}

func (o *outBuf) Write(p []byte) (int, error) {
	o.b = append(o.b, p...)
	return len(p), nil
}

func (o *outBuf) WriteString(s string) (int, error) {
	o.b = append(o.b, s...)
	return len(s), nil
}

func (o *outBuf) WriteByte(c byte) error {
	o.b = append(o.b, c)
	return nil
}

func (o *outBuf) WriteRune(r rune) (int, error) {
	n := len(o.b)
	o.b = utf8.AppendRune(o.b, r)
	return len(o.b) - n, nil
}

// spill passes the text on once a chunk has gathered.
func (o *outBuf) spill() {
	if len(o.b) >= outChunk {
		o.flush()
	}
}

// flush passes on what is held and returns the first write error.
func (o *outBuf) flush() error {
	if len(o.b) > 0 && o.err == nil {
		_, o.err = o.w.Write(o.b)
	}
	o.b = o.b[:0]
	return o.err
}

// begin returns p's buffer set to write to w.
func (p *Printer) begin(w io.Writer) *outBuf {
	p.out.w, p.out.err, p.out.b = w, nil, p.out.b[:0]
	return &p.out
}
