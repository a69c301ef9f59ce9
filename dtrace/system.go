//go:build linux

package dtrace

import (
	"bytes"
	"os"
	"os/exec"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/format"
)

// system runs system()'s command, formatted as printf() would format it,
// with sh -c, as dtrace does with system(3): what the program printed so
// far is written out first, so that the command's output follows it. The
// command's exit status is ignored.
func (c *consumerState) system(b *bytes.Buffer, data []byte, r codegen.Record, args []codegen.Record) error {
	f, err := c.format(r.FormatID)
	if err != nil {
		return err
	}
	vals := make([]format.Value, len(args))
	for i, a := range args {
		vals[i] = value(data, a)
	}
	var cmd bytes.Buffer
	if err := c.fmt.Printf(&cmd, f, vals); err != nil {
		return err
	}
	if _, err := c.out.Write(b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	sh := exec.Command("/bin/sh", "-c", cmd.String())
	sh.Stdout, sh.Stderr = c.out, os.Stderr
	_ = sh.Run()
	return nil
}
