//go:build linux

package dtrace

import (
	"bytes"
	"os"
	"os/exec"

	"github.com/dtrace-go/dtrace/codegen"
)

// system runs system()'s command, formatted as printf() would format it,
// with sh -c, as dtrace does with system(3): what the program printed so
// far is written out first, so that the command's output follows it. The
// command's exit status is ignored.
func (c *consumerState) system(b *bytes.Buffer, data []byte, r codegen.Record, args []codegen.Record) error {
	var cmd bytes.Buffer
	if err := c.printf(&cmd, data, r, args); err != nil {
		return err
	}
	if err := c.flushRecord(b); err != nil {
		return err
	}
	sh := exec.Command("/bin/sh", "-c", cmd.String())
	sh.Stdout, sh.Stderr = c.out, os.Stderr
	_ = sh.Run()
	return nil
}
