package format

import "github.com/dtrace-go/dtrace/program"

// ModuleBaser is an optional extension of a Symbolizer: the start address
// of the module (or, for a process, the mapping) that contains addr. With
// it ReduceKey makes mod() and umod() keys aggregate per module.
type ModuleBaser interface {
	KernelModBase(addr uint64) (uint64, bool)
	UserModBase(pid int, addr uint64) (uint64, bool)
}

// ReduceKey returns an aggregation key value as dtrace stores it before
// merging (dt_aggregate_snap_one): sym() and usym() addresses become the
// start of their symbol, mod() and umod() addresses the start of their
// module, so that all addresses in one function or module form one
// tuple. Other values are returned unchanged.
func (p *Printer) ReduceKey(v program.Value) program.Value {
	s, ok := v.(program.Sym)
	if !ok || p.Sym == nil {
		return v
	}
	switch s.Kind {
	case program.KernelSym:
		if _, fn, off, ok := p.Sym.KernelSym(s.Addr); ok && fn != "" {
			s.Addr -= off
		}
	case program.UserSym:
		if _, fn, off, ok := p.Sym.UserSym(s.PID, s.Addr); ok && fn != "" {
			s.Addr -= off
		}
	case program.KernelMod:
		if mb, ok := p.Sym.(ModuleBaser); ok {
			if base, ok := mb.KernelModBase(s.Addr); ok {
				s.Addr = base
			}
		}
	case program.UserMod:
		if mb, ok := p.Sym.(ModuleBaser); ok {
			if base, ok := mb.UserModBase(s.PID, s.Addr); ok {
				s.Addr = base
			}
		}
	}
	return s
}
