package provider

import "fmt"

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

// Match returns the probes d describes, in id order per provider, creating probes on
// demand where a provider can. No match is not an error here; the caller
// words that one (D_PDESC_ZERO).
func (r *Registry) Match(d Desc) ([]*Probe, error) {
	var out []*Probe
	for _, pv := range r.providers {
		if !Match(d.Provider, pv.Name()) {
			continue
		}
		if err := r.touch(pv); err != nil {
			return nil, err
		}
		found, err := pv.Probes(d)
		if err != nil {
			return nil, fmt.Errorf("%s provider: %w", pv.Name(), err)
		}
		for _, p := range found {
			r.intern(pv, p)
		}
		// Probes created earlier on demand exist from then on.
		for _, p := range r.byID {
			if p.Owner == pv && d.Matches(p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
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
