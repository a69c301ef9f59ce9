//go:build !linux

package output

// Containers names cgroups by id; outside Linux it knows none.
type Containers struct{}

// NewContainers returns a Containers that knows no cgroup.
func NewContainers() *Containers { return &Containers{} }

// Name is "" outside Linux.
func (c *Containers) Name(id uint64) (name, path string) { return "", "" }
