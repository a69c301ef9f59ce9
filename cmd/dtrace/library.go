package main

import (
	"io"
	"strings"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dtrace"
)

// The command runs on the library: openEngine adapts a *dtrace.Handle to
// the engine seam.
func init() {
	openEngine = func(opts *dtrace.Options, cfg engineConfig) (engine, error) {
		h, err := dtrace.Open(opts, dtrace.Config{Testing: cfg.Testing, Stderr: cfg.Stderr, Target: cfg.Target})
		if err != nil {
			return nil, err
		}
		return &libEngine{h: h}, nil
	}
}

// libEngine is the engine backed by the library.
type libEngine struct {
	h *dtrace.Handle
}

func (e *libEngine) Compile(src source) (program, error) {
	s := dtrace.Source{Name: src.Name, Text: src.Text, MacroArgs: src.Args}
	switch src.Kind {
	case specNone:
		s.Kind = dtrace.SpecProgram
	case specProvider:
		s.Kind = dtrace.SpecProvider
	case specModule:
		s.Kind = dtrace.SpecModule
	case specFunc:
		s.Kind = dtrace.SpecFunction
	default:
		s.Kind = dtrace.SpecName
	}
	if !src.IsFile && s.Kind == dtrace.SpecProgram {
		s.Kind = dtrace.SpecName
	}
	s.Script = src.IsFile
	p, err := e.h.Compile(s)
	if err != nil {
		return nil, libError(err)
	}
	return p, nil
}

// libError strips the wrapping the command adds itself ("failed to
// compile script NAME: ").
func libError(err error) error {
	if se, ok := err.(*dtrace.SourceError); ok {
		return se.Err
	}
	return err
}

func (e *libEngine) Info(p program) progInfo {
	pr := p.(*dtrace.Program)
	return progInfo{Matches: pr.Matches, Probes: pr.Probes, DescAttr: attrOf(pr.DescAttr), StmtAttr: attrOf(pr.StmtAttr)}
}

func (e *libEngine) Exec(p program) (progInfo, error) {
	return e.Info(p), nil
}

func (e *libEngine) List(p program) ([]probeDesc, error) {
	var pr *dtrace.Program
	if p != nil {
		pr = p.(*dtrace.Program)
	}
	probes, err := e.h.List(pr)
	if err != nil {
		return nil, err
	}
	out := make([]probeDesc, len(probes))
	for i, q := range probes {
		out[i] = probeDesc{ID: int(q.ID), Provider: q.Provider, Module: q.Module, Function: q.Function, Name: q.Name,
			Args: e.h.ListArgTypes(q)}
	}
	return out, nil
}

func (e *libEngine) Go() error                      { return e.h.Go() }
func (e *libEngine) Work(w io.Writer) (bool, error) { return e.h.Work(w) }
func (e *libEngine) Stop() error                    { return e.h.Stop() }
func (e *libEngine) ExitStatus() int                { return e.h.ExitStatus() }
func (e *libEngine) Close() error                   { return e.h.Close() }

func (e *libEngine) PrintAggregations(w io.Writer) error { return e.h.PrintAggregations(w) }
func (e *libEngine) Output(w io.Writer) io.Writer        { return e.h.Output(w) }

// attrOf splits a stability attribute triple into the words -v prints.
func attrOf(a check.Attr) attr {
	w := strings.SplitN(a.String(), "/", 3)
	return attr{Name: w[0], Data: w[1], Class: w[2]}
}
