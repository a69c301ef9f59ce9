package main

import (
	"slices"
	"strings"

	"github.com/dtrace-go/dtrace/agent"
	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/formats"
)

// forwarded reports whether a -x option goes to the guests' agents:
// all but those that choose this dtrace's output (the output formats'
// options, from their registry) or its guests.
func forwarded(name string) bool {
	switch name {
	case "agent", "guest", "oformat":
		return false
	}
	for _, f := range formats.All() {
		if f.When != output.Streaming && (name == f.Option || slices.Contains(f.Params, name)) {
			return false
		}
	}
	return true
}

// serveAgent is -x agent=DEVICE: serve one host, then exit.
func (c *cmdline) serveAgent() int {
	if err := kernel.CheckPrivileges(); err != nil {
		c.errorf("%v", err)
		return exitError
	}
	dev, err := agent.OpenDevice(c.opts.Agent, c.stderr)
	if err != nil {
		c.errorf("%v", err)
		return exitError
	}
	defer dev.Close()
	if err := agent.Serve(dev, c.stderr); err != nil {
		c.errorf("agent: %v", err)
		return exitError
	}
	return exitSuccess
}

// startGuests connects to every -x guest and starts the programs there.
func (c *cmdline) startGuests() (*agent.Host, error) {
	var p agent.Program
	for _, cmd := range c.cmds {
		s := cmd.prog.Source
		p.Sources = append(p.Sources, agent.Source{Name: s.Name, Text: s.Text, Kind: int(s.Kind),
			Script: s.Script, MacroArgs: s.MacroArgs})
	}
	p.Options = c.forward
	return agent.StartHost(agent.HostConfig{Guests: c.opts.Guests, Program: p, Stderr: c.stderr,
		Errorf: c.errorf, Notice: c.notice, Verbose: c.verbose > 0 || c.opts.Verbose})
}

// guestFormats names the output formats that take guests' events, as
// "text and perfetto".
func guestFormats() string {
	var names []string
	for _, f := range formats.All() {
		if f.Guests {
			names = append(names, f.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
