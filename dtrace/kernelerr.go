package dtrace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dtrace-go/dtrace/internal/kfeature"
	"github.com/dtrace-go/dtrace/loader"
)

// showVerifierLog prints the verifier's log of a refused program under
// -S, -x verbose or -x bpflog; the error itself carries only the reason.
func (h *Handle) showVerifierLog(err error) {
	var ve *loader.VerifierError
	if !(h.opts.Verbose || h.opts.BPFLog) || !errors.As(err, &ve) || len(ve.Log) == 0 || h.conf.Stderr == nil {
		return
	}
	fmt.Fprintf(h.conf.Stderr, "BPF verifier log for %s:\n%s\n", ve.Probe, strings.TrimRight(strings.Join(ve.Log, "\n"), "\n"))
}

// verifierLogSize is -x bpflogsize as the starting size of the verifier
// log buffer (it still grows when the log does not fit): 0 when unset,
// at most the kernel's bound (UINT_MAX >> 2).
func verifierLogSize(n int64) uint32 {
	const most = (1<<32 - 1) >> 2
	switch {
	case n <= 0:
		return 0
	case n > most:
		return most
	}
	return uint32(n)
}

// btfHint adds to a code generation error, on a kernel without BTF, that
// kernel types (curthread->..., typed probe arguments) need it: without
// BTF they are unknown, and the error alone would not say why.
func btfHint(err error) error {
	if err == nil {
		return nil
	}
	if nb := kfeature.CheckBTF(); nb != nil {
		return fmt.Errorf("%w (kernel types are unavailable: %v)", err, nb)
	}
	return err
}
