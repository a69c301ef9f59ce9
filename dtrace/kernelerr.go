package dtrace

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	fmt.Fprintf(h.conf.Stderr, "BPF verifier log for %s:\n", ve.Probe)
	writeBPFLog(h.conf.Stderr, strings.Join(ve.Log, "\n"))
}

// writeBPFLog writes a verifier log as dtrace does, each line after
// "BPF: ".
func writeBPFLog(w io.Writer, log string) {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		b.WriteString("BPF: " + l + "\n")
	}
	io.WriteString(w, b.String())
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

// debugf writes a line of -x debug output, as dtrace-utils' libdtrace
// does: "dtrace DEBUG <seconds since the epoch>: message" on stderr (a
// form test harnesses strip before comparing), then the seconds since the
// handle was opened, which show where the time of a slow start goes.
func (h *Handle) debugf(format string, a ...any) {
	if !h.opts.Debug || h.conf.Stderr == nil {
		return
	}
	fmt.Fprintf(h.conf.Stderr, "dtrace DEBUG %d: %s (+%.3f s)\n", time.Now().Unix(), fmt.Sprintf(format, a...), time.Since(h.born).Seconds())
}
