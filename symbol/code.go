package symbol

import (
	"fmt"
	"os"
)

// Code returns the bytes of a function, read from the file.
func (o *Object) Code(fn Func) ([]byte, error) {
	c := o.OpenCode()
	defer c.Close()
	return c.Code(fn)
}

// CodeFile reads the code of an object's functions through one open
// file. Making the pid probes of every function of a program reads each
// function's code, and opening, stat'ing and closing the file for each
// was most of that time (9,552 functions of postgres: 75% of 44 s in a
// guest whose files are on a shared file system).
type CodeFile struct {
	*Object
	f    *os.File
	size int64
	err  error
}

// OpenCode returns a CodeFile of o. The file opens at the first Code;
// Close closes it.
func (o *Object) OpenCode() *CodeFile { return &CodeFile{Object: o} }

// Code returns the bytes of a function, read from the file.
func (c *CodeFile) Code(fn Func) ([]byte, error) {
	off, ok := c.FileOffset(fn.Value)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not in a loaded segment", c.Path, fn.Name)
	}
	if c.f == nil && c.err == nil {
		c.f, c.err = os.Open(c.Path)
		if c.err == nil {
			var fi os.FileInfo
			if fi, c.err = c.f.Stat(); c.err != nil {
				c.f.Close()
				c.f = nil
			} else {
				c.size = fi.Size()
			}
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	// A symbol's size is the file's word: read no more than the file has.
	b, err := readRange(c.f, c.size, off, fn.Size)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", c.Path, fn.Name, err)
	}
	return b, nil
}

// Close closes the file, if Code opened it; Code then fails.
func (c *CodeFile) Close() error {
	f := c.f
	c.f, c.err = nil, os.ErrClosed
	if f == nil {
		return nil
	}
	return f.Close()
}
