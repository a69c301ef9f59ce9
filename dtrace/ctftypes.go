package dtrace

import (
	"bufio"
	"fmt"
	"os"

	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/ctf"
	"github.com/dtrace-go/dtrace/dlang/types"
)

// writeTypes writes the type containers the ctypes and dtypes options
// name, in CTF, after a program is checked: "C" (the intrinsic types)
// and "D" (D's typedefs and string, and every type the D library and the
// program declare).
func (h *Handle) writeTypes(info *check.Info) error {
	if h.opts.CTypes != "" {
		if err := writeCTF(h.opts.CTypes, types.CScope()); err != nil {
			return err
		}
	}
	if h.opts.DTypes != "" {
		return writeCTF(h.opts.DTypes, types.DScope(info.StrSize), info.Scope)
	}
	return nil
}

func writeCTF(path string, scopes ...*types.Scope) error {
	var named []ctf.Named
	for _, s := range scopes {
		for _, n := range s.Names() {
			named = append(named, ctf.Named{Name: n, Type: s.Lookup(n)})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("failed to create CTF container %s: %v", path, err)
	}
	w := bufio.NewWriter(f)
	err = ctf.Write(w, named)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("failed to write CTF container %s: %v", path, err)
	}
	return nil
}

// checkCTFPath says, in -x debug's lines, what becomes of the CTF archive
// the ctfpath option names. dtrace-utils reads the kernel's types from
// that archive, and from BTF when it cannot open it; here they are
// always read from BTF, so an archive that opens is not read either.
func (h *Handle) checkCTFPath() {
	path := h.opts.CTFPath
	if path == "" {
		return
	}
	if err := ctf.CheckArchive(path); err != nil {
		h.debugf("Cannot open CTF archive %s: %v; reading kernel types from BTF", path, err)
		return
	}
	h.debugf("CTF archive %s opens; kernel types are read from BTF, not from it", path)
}
