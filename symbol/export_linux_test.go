//go:build linux

package symbol

// NewTestDebuginfod is a debuginfod client of the environment env, for
// the package's external tests (nil without a server).
func NewTestDebuginfod(env map[string]string) *debuginfod {
	return newDebuginfod(func(k string) string { return env[k] })
}

// Find waits for the debug file of build id (hex); "" when none came.
func (d *debuginfod) Find(id string) string { return d.find(id, "") }
