package provider

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

func TestParseDesc(t *testing.T) {
	tests := []struct {
		in      string
		last    Field
		want    Desc
		wantErr string
	}{
		{"BEGIN", FieldName, Desc{Name: "BEGIN"}, ""},
		{"read:entry", FieldName, Desc{Function: "read", Name: "entry"}, ""},
		{"vmlinux:read:entry", FieldName, Desc{Module: "vmlinux", Function: "read", Name: "entry"}, ""},
		{"syscall::read:entry", FieldName, Desc{"syscall", "", "read", "entry"}, ""},
		{":::", FieldName, Desc{}, ""},
		{"profile::::tick-1sec", FieldName, Desc{}, `invalid probe description "profile::::tick-1sec": Overspecified probe description`},
		{"profile", FieldProvider, Desc{Provider: "profile"}, ""},
		{"profile:::profile-97", FieldProvider, Desc{}, `invalid probe description "profile:::profile-97": Overspecified probe description`},
		{"syscall:read", FieldFunction, Desc{Module: "syscall", Function: "read"}, ""},
		{":genunix::", FieldModule, Desc{}, "Overspecified"},
		// An empty first field is not one of them (dtrace reads the
		// fields from the right and stops at the start of the text).
		{"::read:", FieldFunction, Desc{Module: "read"}, ""},
		{":genunix::", FieldFunction, Desc{Provider: "genunix"}, ""},
		{":a:b:c:d", FieldName, Desc{"a", "b", "c", "d"}, ""},
		{"::a:b:c:d", FieldName, Desc{}, "Overspecified"},
	}
	for _, tt := range tests {
		got, err := ParseDescField(tt.in, tt.last)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseDescField(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDescField(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if s := (Desc{Module: "profile", Name: "tick-1sec"}).String(); s != ":profile::tick-1sec" {
		t.Errorf("String() = %q", s)
	}
}

// fakeProvider has fixed probes and creates "made-N" on demand.
type fakeProvider struct {
	name  string
	names []string
}

func (f *fakeProvider) Name() string { return f.name }
func (f *fakeProvider) Probes(d Desc) ([]*Probe, error) {
	var out []*Probe
	for _, n := range f.names {
		if d.MatchesIn("", "", n) {
			out = append(out, &Probe{Name: n})
		}
	}
	if f.name == "other" && strings.HasPrefix(d.Name, "made-") && !HasGlob(d.Name) {
		out = append(out, &Probe{Name: d.Name})
	}
	return out, nil
}
func (f *fakeProvider) Program(*Probe) ProgramKind {
	return ProgramKind{Type: ebpf.RawTracepoint, TestRun: true}
}
func (f *fakeProvider) Prologue(*Probe, int16) asm.Instructions         { return nil }
func (f *fakeProvider) Attach(*Probe, *ebpf.Program) (io.Closer, error) { return nil, nil }

func TestRegistry(t *testing.T) {
	r := NewRegistry(
		&fakeProvider{name: "dtrace", names: []string{"BEGIN", "END", "ERROR"}},
		&fakeProvider{name: "other", names: []string{"a", "b"}},
	)
	match := func(s string) string {
		ps, err := r.MatchString(s)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, p := range ps {
			ids = append(ids, p.String()+"="+string(rune('0'+p.ID)))
		}
		return strings.Join(ids, " ")
	}
	tests := []struct{ desc, want string }{
		{"END", "dtrace:::END=2"}, // END asked first still gets 2
		{"made-1", "other:::made-1=6"},
		{"other:::", "other:::a=4 other:::b=5 other:::made-1=6"},
		{"made-1", "other:::made-1=6"},
		{":::[AE]*", "dtrace:::END=2 dtrace:::ERROR=3"},
		{"x:::", ""},
		{":x::BEGIN", ""},
	}
	for _, tt := range tests {
		if got := match(tt.desc); got != tt.want {
			t.Errorf("Match(%q) = %q, want %q", tt.desc, got, tt.want)
		}
	}
	if p := r.Probe(1); p == nil || p.Name != "BEGIN" || p.Owner == nil {
		t.Errorf("Probe(1) = %+v", p)
	}
	if r.Probe(0) != nil || r.Probe(99) != nil {
		t.Error("Probe of unknown id is not nil")
	}
	if got := ListLine(r.Probe(1)); got != "    1     dtrace                                                     BEGIN" {
		t.Errorf("ListLine = %q", got)
	}
}

// claimer is a claiming provider whose probes come and go (a process's
// libraries), each probe's Data saying where it was made.
type claimer struct {
	names []string
	gen   int
}

func (c *claimer) Name() string           { return "proc" }
func (c *claimer) Claims(pat string) bool { return pat == "" || Match(pat, "proc7") }
func (c *claimer) Probes(d Desc) ([]*Probe, error) {
	var out []*Probe
	for _, n := range c.names {
		if d.MatchesIn("", "", n) {
			out = append(out, &Probe{Provider: "proc7", Function: n, Name: "entry", Data: c.gen})
		}
	}
	return out, nil
}
func (c *claimer) Program(*Probe) ProgramKind                      { return ProgramKind{} }
func (c *claimer) Prologue(*Probe, int16) asm.Instructions         { return nil }
func (c *claimer) Attach(*Probe, *ebpf.Program) (io.Closer, error) { return nil, nil }

// TestRematch: Match keeps the probes made before; Rematch gives what the
// provider makes now, under the ids of before, with their new Data.
func TestRematch(t *testing.T) {
	c := &claimer{names: []string{"a", "b"}}
	other := &fakeProvider{name: "other", names: []string{"x"}}
	r := NewRegistry(c, other)
	names := func(ps []*Probe) string {
		var s []string
		for _, p := range ps {
			s = append(s, fmt.Sprintf("%s%d/%v", p.Function, p.ID, p.Data))
		}
		return strings.Join(s, " ")
	}
	d := Desc{Provider: "proc*"}
	ps, err := r.Match(d)
	if err != nil || names(ps) != "a1/0 b2/0" {
		t.Fatalf("Match = %s, %v", names(ps), err)
	}
	c.names, c.gen = []string{"b", "c"}, 1 // a unloaded, c loaded, b moved
	only := func(pv Provider) bool { return pv == Provider(c) }
	if ps, _ = r.Rematch(d, only); names(ps) != "b2/1 c3/1" {
		t.Errorf("Rematch = %s, want b2/1 c3/1", names(ps))
	}
	if ps, _ = r.Match(d); names(ps) != "a1/0 b2/1 c3/1" {
		t.Errorf("Match after = %s, want a1/0 b2/1 c3/1", names(ps))
	}
	// Providers only refuses are not asked.
	if ps, _ = r.Rematch(Desc{}, only); strings.Contains(names(ps), "x") {
		t.Errorf("Rematch asked another provider: %s", names(ps))
	}
}
