package provider

import (
	"fmt"
	"sort"
)

// Claimer is implemented by providers whose probes carry provider names
// other than their own Name: the pid provider's pid1234, USDT's
// postgresql1234. The Registry asks Claims instead of matching Name, and
// takes the probes Probes returns as described even where a field does
// not match literally (a.out stands for the executable's real name).
type Claimer interface {
	Claims(providerPattern string) bool
}

// Namer is implemented by providers whose probes have a few fixed names
// (fbt: entry and return). The Registry does not consult such a provider
// for a description whose name field matches none of them, so that
// matching BEGIN does not read the kernel's 40,000 functions.
type Namer interface {
	ProbeNames() []string
}

// NameFilter is implemented by providers that make probes on demand from
// names of a form of their own (cpc's EVENT-MODE-COUNT) and whose listing
// costs system calls: the Registry does not consult such a provider for
// a description whose name field it says no probe of it can have, so that
// a program naming none of its probes (BEGIN) pays nothing for it.
type NameFilter interface {
	MayName(pattern string) bool
}

// DescFilter is implemented by providers that make probes from what
// processes map (usdt) and can tell from a whole description that it
// names none of theirs: the Registry does not consult such a provider
// for it, so that BEGIN reads nothing of the -c or -p process.
type DescFilter interface {
	MayMatch(d Desc) bool
}

// Unavailabler is implemented by providers that may offer no probes on
// this kernel; Unavailable says why ("" when the provider has probes).
type Unavailabler interface {
	Unavailable() string
}

// Internal is implemented by providers whose probes serve the library
// itself (the transports of flow variables): a description matches them
// only when it names the provider exactly, so that dtrace -l and globs
// never show them.
type Internal interface {
	Internal() bool
}

// Registry holds the providers of one session and gives probes stable ids.
// It is not safe for concurrent use.
type Registry struct {
	providers []Provider
	touched   map[Provider]bool
	byName    map[string]*Probe
	byID      []*Probe // index id-1
}

// NewRegistry returns a registry holding the given providers in order.
func NewRegistry(providers ...Provider) *Registry {
	r := &Registry{touched: map[Provider]bool{}, byName: map[string]*Probe{}}
	for _, p := range providers {
		r.Add(p)
	}
	return r
}

// Add appends a provider. Ids of its probes come after those of the
// providers added before it that have been looked at.
func (r *Registry) Add(p Provider) {
	r.providers = append(r.providers, p)
}

// Providers returns the providers in the order they were added.
func (r *Registry) Providers() []Provider { return r.providers }

// MatchString returns the probes the description desc ("syscall::read:",
// "BEGIN") names, as Match does.
func (r *Registry) MatchString(desc string) ([]*Probe, error) {
	d, err := ParseDesc(desc)
	if err != nil {
		return nil, err
	}
	return r.Match(d)
}

// Match returns the probes d describes, in id order per provider, creating probes on
// demand where a provider can. No match is not an error here; the caller
// words that one (D_PDESC_ZERO).
func (r *Registry) Match(d Desc) ([]*Probe, error) {
	return r.match(d, nil)
}

// Rematch returns the probes the claiming providers (pid, usdt) that
// only accepts make for d now, without the probes they made before that they no longer make (a
// library the process has since unloaded): what a description names
// after the processes it names have changed.
func (r *Registry) Rematch(d Desc, only func(Provider) bool) ([]*Probe, error) {
	return r.match(d, only)
}

// match is Match, or with only set Rematch.
func (r *Registry) match(d Desc, only func(Provider) bool) ([]*Probe, error) {
	// A provider named exactly (no glob) by a provider of fixed name is
	// that provider alone: claimers (pid, usdt) need not scan processes.
	exact := false
	if d.Provider != "" && !HasGlob(d.Provider) {
		for _, pv := range r.providers {
			if _, claims := pv.(Claimer); !claims && pv.Name() == d.Provider {
				exact = true
			}
		}
	}
	var out []*Probe
	for _, pv := range r.providers {
		cl, claims := pv.(Claimer)
		if claims && (exact || !cl.Claims(d.Provider)) || !claims && !Match(d.Provider, pv.Name()) || only != nil && !only(pv) {
			continue
		}
		if in, ok := pv.(Internal); ok && in.Internal() && d.Provider != pv.Name() {
			continue
		}
		if nm, ok := pv.(Namer); ok && !matchesAny(d.Name, nm.ProbeNames()) {
			continue
		}
		if nf, ok := pv.(NameFilter); ok && !nf.MayName(d.Name) {
			continue
		}
		if df, ok := pv.(DescFilter); ok && !df.MayMatch(d) {
			continue
		}
		if err := r.touch(pv); err != nil {
			return nil, err
		}
		found, err := pv.Probes(d)
		if err != nil {
			return nil, fmt.Errorf("%s provider: %w", pv.Name(), err)
		}
		var mine []*Probe
		taken := map[*Probe]bool{}
		for _, p := range found {
			q := r.intern(pv, p)
			if only != nil && q != p {
				// Made again: where it is now (a library loaded anew
				// sits at another address, in another file).
				q.Data = p.Data
			}
			p = q
			if claims && !taken[p] {
				taken[p] = true
				mine = append(mine, p)
			}
		}
		// Probes created earlier on demand exist from then on.
		for _, p := range r.byID {
			if only == nil && p.Owner == pv && d.Matches(p) && !taken[p] {
				mine = append(mine, p)
			}
		}
		sort.Slice(mine, func(i, j int) bool { return mine[i].ID < mine[j].ID })
		out = append(out, mine...)
	}
	return out, nil
}

func matchesAny(pattern string, names []string) bool {
	for _, n := range names {
		if Match(pattern, n) {
			return true
		}
	}
	return false
}

// Unavailable says why the provider a description names exactly offers
// no probes on this kernel, or "" (a glob, another provider, or a probe
// name the provider never has).
func (r *Registry) Unavailable(d Desc) string {
	if d.Provider == "" || HasGlob(d.Provider) {
		return ""
	}
	for _, pv := range r.providers {
		u, ok := pv.(Unavailabler)
		if !ok || pv.Name() != d.Provider {
			continue
		}
		// A name the provider never has (fbt:::boo) matches nothing on
		// any kernel: the plain no-match error says it all.
		if nm, ok := pv.(Namer); ok && !matchesAny(d.Name, nm.ProbeNames()) {
			return ""
		}
		return u.Unavailable()
	}
	return ""
}

// List returns every probe known for dtrace -l: all the probes of every
// provider, sorted by id.
func (r *Registry) List() ([]*Probe, error) {
	return r.Match(Desc{})
}

// Probe returns the probe with the given id, or nil.
func (r *Registry) Probe(id uint32) *Probe {
	if id == 0 || int(id) > len(r.byID) {
		return nil
	}
	return r.byID[id-1]
}

// touch numbers a provider's standing probes the first time it is used, so
// that ids do not depend on which description came first.
func (r *Registry) touch(pv Provider) error {
	if r.touched[pv] {
		return nil
	}
	r.touched[pv] = true
	all, err := pv.Probes(Desc{})
	if err != nil {
		return fmt.Errorf("%s provider: %w", pv.Name(), err)
	}
	for _, p := range all {
		r.intern(pv, p)
	}
	return nil
}

func (r *Registry) intern(pv Provider, p *Probe) *Probe {
	if p.Provider == "" {
		p.Provider = pv.Name()
	}
	key := p.String()
	if old, ok := r.byName[key]; ok {
		return old
	}
	if p.Owner == nil {
		p.Owner = pv
	}
	p.ID = uint32(len(r.byID) + 1)
	r.byID = append(r.byID, p)
	r.byName[key] = p
	return p
}
