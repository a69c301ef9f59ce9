//go:build linux

package dtrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/dtrace-go/dtrace/codegen"
)

// freopen runs freopen(): the output that follows (the records' and
// what the caller prints through Output) goes to the named file, opened
// for appending and created if missing; freopen("") goes back to the
// caller's writer. What the record printed before it is written to the
// old output first. A file that cannot be opened is a library-level
// error and the output stays where it was.
func (c *consumerState) freopen(b *bytes.Buffer, data []byte, r codegen.Record, args []codegen.Record) error {
	var name bytes.Buffer
	if err := c.printf(&name, data, r, args); err != nil {
		return err
	}
	if err := c.flushRecord(b); err != nil {
		return err
	}
	if name.Len() == 0 {
		c.closeReopened()
		c.out = c.base
		return nil
	}
	file, err := os.OpenFile(name.String(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		c.liberr(fmt.Sprintf("couldn't freopen() \"%s\": %s", name.String(), errText(err)))
		return nil
	}
	c.closeReopened()
	c.reopened = file
	c.out = file
	return nil
}

// errText is an error's errno text, as strerror words it.
func errText(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if s := en.Error(); s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}

// setOutput makes w the writer output goes to unless freopen()
// redirected it.
func (c *consumerState) setOutput(w io.Writer) {
	c.base = w
	if c.reopened != nil {
		c.out = c.reopened
	} else {
		c.out = w
	}
}

func (c *consumerState) closeReopened() {
	if c.reopened != nil {
		c.reopened.Close()
		c.reopened = nil
	}
}

// Output returns where output meant for w goes: the file freopen() named
// while one is in effect, else w. dtrace(1M) prints its closing newline
// and the final aggregations there.
func (h *Handle) Output(w io.Writer) io.Writer {
	if h.cons != nil && h.cons.reopened != nil {
		return h.cons.reopened
	}
	return w
}
