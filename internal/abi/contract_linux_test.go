//go:build linux

package abi_test

import (
	"encoding/binary"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf/perf"

	"github.com/dtrace-go/dtrace/codegen"
	"github.com/dtrace-go/dtrace/dlang/check"
	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/internal/abi"
	"github.com/dtrace-go/dtrace/internal/testutil/tracetest"
	"github.com/dtrace-go/dtrace/program"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/dtrace"
)

// contractProgram: clause 0 traces what the loader and the dtrace
// provider put into mstate; clause 1 faults on a load from address 8;
// clause 2, the ERROR clause, traces its probe id and arguments and
// calls exit(7).
const contractProgram = `
BEGIN { trace(id); trace(epid); trace(arg0); trace(arg9); }
BEGIN { trace(*(int *)8); }
ERROR { trace(id); trace(arg1); trace(arg2); trace(arg3); trace(arg4); trace(arg5); exit(7); }
`

// TestContract runs a real BEGIN program (codegen's clauses, the loader's
// probe program, the dtrace provider's prologue) with BPF_PROG_TEST_RUN
// and decodes what it leaves behind with this package's constants only:
// the data records' headers, the fault record, dt_state and dt_cpustate.
// Item offsets within a record come from the Spec, as the consumer
// takes them.
func TestContract(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for BPF")
	}
	fset := syntax.NewFileSet()
	prog, err := syntax.Parse(fset, "contract.d", []byte(contractProgram), 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := check.Check(fset, []*syntax.Program{prog}, &check.Config{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := codegen.Generate(info, codegen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := provider.NewRegistry(dtrace.New())
	o, plan := tracetest.Load(t, spec, reg)
	for name, id := range map[string]uint32{"BEGIN": abi.ProbeBegin, "END": abi.ProbeEnd, "ERROR": abi.ProbeError} {
		if p := reg.Probe(id); p == nil || p.Provider != "dtrace" || p.Name != name {
			t.Errorf("probe id %d is %v, want dtrace:::%s", id, p, name)
		}
	}
	for _, m := range []struct {
		name string
		size uint32
	}{{abi.MapState, abi.StateSize}, {abi.MapCPUState, abi.CPUStateSize}} {
		if got := o.Map(m.name).ValueSize(); got != m.size {
			t.Errorf("%s value size %d, want %d", m.name, got, m.size)
		}
	}
	rd, err := perf.NewReader(o.Map(abi.MapBuf), 4*os.Getpagesize())
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()

	args := []uint64{42, 1, 2, 3, 4, 5, 6, 7, 8, 99}
	if err := o.Run(abi.ProbeBegin, args); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	for _, r := range tracetest.ReadRecords(t, rd, 200*time.Millisecond) {
		recs = append(recs, r.RawSample)
	}
	if len(recs) != 3 {
		t.Fatalf("got %d records, want clause 0's, the fault record, the ERROR clause's", len(recs))
	}
	epidOf := func(clause int) uint32 {
		for _, e := range plan.EPIDs {
			if e.Clause == clause && (e.ProbeID == abi.ProbeBegin || clause == 2) {
				return e.EPID
			}
		}
		t.Fatalf("no EPID for clause %d", clause)
		return 0
	}

	// Clause 0: the header and what the prologues put into mstate.
	got := items(t, spec, recs[0])
	if h := u32(recs[0], abi.HdrEPID); h != epidOf(0) || h == abi.EPIDNone || h >= abi.EPIDReserved {
		t.Errorf("clause 0 record EPID %d, want %d", h, epidOf(0))
	}
	if s := u32(recs[0], abi.HdrSpecID); s != 0 {
		t.Errorf("clause 0 record specid %d, want 0", s)
	}
	if want := []uint64{abi.ProbeBegin, uint64(epidOf(0)), 42, 99}; !slices.Equal(got, want) {
		t.Errorf("clause 0 traced id, epid, arg0, arg9 = %v, want %v", got, want)
	}

	// The fault record.
	f := recs[1]
	if len(f) < abi.FaultRecordSize {
		t.Fatalf("fault record of %d bytes, want %d", len(f), abi.FaultRecordSize)
	}
	if e := u32(f, abi.FaultRecEPID); e != abi.EPIDFault {
		t.Fatalf("second record has EPID %#x, want the fault record's %#x", e, abi.EPIDFault)
	}
	pc := u64(f, abi.FaultRecPC)
	for _, c := range []struct {
		what      string
		got, want uint64
	}{
		{"clause", uint64(u32(f, abi.FaultRecClause)), 1},
		{"probe", uint64(u32(f, abi.FaultRecProbe)), abi.ProbeBegin},
		{"code", u64(f, abi.FaultRecCode), abi.FltBadAddr},
		{"illval", u64(f, abi.FaultRecIllval), 8},
		{"clause epid", uint64(u32(f, abi.FaultRecClauseEPID)), uint64(epidOf(1))},
	} {
		if c.got != c.want {
			t.Errorf("fault record %s = %d, want %d", c.what, c.got, c.want)
		}
	}
	if int64(pc) < 0 || pc >= uint64(len(spec.Clauses[1].Insns)) {
		t.Errorf("fault record pc %d outside clause 1's %d instructions", int64(pc), len(spec.Clauses[1].Insns))
	}
	if abi.FaultName(u64(f, abi.FaultRecCode)) != "invalid address" {
		t.Errorf("FaultName(%d) = %q", u64(f, abi.FaultRecCode), abi.FaultName(u64(f, abi.FaultRecCode)))
	}

	// The ERROR clause sees the fault as DTrace's ERROR arguments.
	got = items(t, spec, recs[2])
	if want := []uint64{abi.ProbeError, abi.ProbeBegin, 1, pc, abi.FltBadAddr, 8}; len(got) < 6 || !slices.Equal(got[:6], want) {
		t.Errorf("ERROR traced id, arg1..arg5 = %v, want %v", got[:6], want)
	}

	// exit(7) in ERROR: the status, and BEGIN's advance past DRAINING.
	var st []byte
	if err := o.Map(abi.MapState).Lookup(uint32(0), &st); err != nil {
		t.Fatal(err)
	}
	if a, s := u32(st, abi.StateActivity), u32(st, abi.StateExitStatus); a != abi.ActivityStopped || s != 7 {
		t.Errorf("dt_state activity %d, exit status %d; want %d, 7", a, s, abi.ActivityStopped)
	}
	var per [][]byte
	if err := o.Map(abi.MapCPUState).Lookup(uint32(0), &per); err != nil {
		t.Fatal(err)
	}
	var errs, drops uint64
	for _, v := range per {
		errs += u64(v, abi.CPUErrors)
		for _, off := range []int{abi.CPUDynVarDrops, abi.CPUAggDrops, abi.CPUSpecDrops, abi.CPUSpecBusy, abi.CPUSpecUnavail} {
			drops += u64(v, off)
		}
	}
	if errs != 1 || drops != 0 {
		t.Errorf("dt_cpustate errors %d, drops %d; want 1, 0", errs, drops)
	}
}

// items returns the integer values a record's segment holds, read at the
// offsets its RecordSpec gives.
func items(t *testing.T, spec *program.Spec, rec []byte) []uint64 {
	t.Helper()
	if len(rec) < abi.HdrSize {
		t.Fatalf("record of %d bytes", len(rec))
	}
	epid, seg := u32(rec, abi.HdrEPID), u32(rec, abi.HdrSegment)
	var cs *program.ClauseSpec
	for _, c := range spec.Clauses {
		if c.EPID == epid {
			cs = c
		}
	}
	if cs == nil || int(seg) >= len(cs.Segments) {
		t.Fatalf("record with EPID %d, segment %d: no such clause segment", epid, seg)
	}
	var out []uint64
	for _, it := range cs.Segments[seg].Records {
		if it.Offset < abi.HdrSize {
			t.Fatalf("item at %d overlaps the %d-byte header", it.Offset, abi.HdrSize)
		}
		var v uint64
		switch it.Size {
		case 4:
			v = uint64(u32(rec, int(it.Offset)))
		case 8:
			v = u64(rec, int(it.Offset))
		default:
			continue
		}
		out = append(out, v)
	}
	return out
}

func u32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func u64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
