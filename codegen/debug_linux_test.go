//go:build linux

package codegen

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/internal/testutil/testprog"
	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/program"
)

// debugSpec compiles the D file named by $CODEGEN_DEBUG_FILE, for
// investigating corpus programs; without one the test is skipped.
func debugSpec(t *testing.T) *program.Spec {
	t.Helper()
	_, src := testprog.EnvFile(t, "CODEGEN_DEBUG_FILE")
	return compileD(t, string(src), Options{})
}

// TestDebugFile loads the D file named by $CODEGEN_DEBUG_FILE and fires
// BEGIN once, for investigating corpus programs.
func TestDebugFile(t *testing.T) {
	spec := debugSpec(t)
	r := loadSpec(t, spec)
	t.Log(render(t, spec, r.fire(t)))
}

// TestDebugDump prints the instructions generated for $CODEGEN_DEBUG_FILE.
func TestDebugDump(t *testing.T) {
	spec := debugSpec(t)
	for _, c := range spec.Clauses {
		t.Logf("%v", c.Insns)
	}
}

// TestDebugRawLoad loads $CODEGEN_DEBUG_FILE with a raw BPF_PROG_LOAD
// and prints the tail of the verifier log, which cilium/ebpf does not
// return when the kernel answers EFAULT.
func TestDebugRawLoad(t *testing.T) {
	spec := debugSpec(t)
	r := &runner{spec: spec, maps: map[string]*ebpf.Map{}}
	defer r.close()
	for _, ms := range spec.Maps {
		es, err := loader.MapSpec(ms, 2)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ebpf.NewMap(es)
		if err != nil {
			t.Fatal(err)
		}
		r.maps[ms.Name] = m
	}
	insns := wrapper(spec, 1)
	for name, m := range r.maps {
		_ = insns.AssociateMap(name, m)
	}
	var buf bytes.Buffer
	if err := insns.Marshal(&buf, binary.LittleEndian); err != nil {
		t.Fatal(err)
	}
	code := buf.Bytes()
	logBuf := make([]byte, 1<<29)
	lic := []byte("GPL\x00")
	attr := struct {
		progType, insnCnt   uint32
		insns, license      uint64
		logLevel, logSize   uint32
		logBuf              uint64
		kernVersion, flags  uint32
		name                [16]byte
		ifindex, expAttType uint32
	}{progType: 17, insnCnt: uint32(len(code) / 8), insns: uint64(uintptr(unsafe.Pointer(&code[0]))),
		license: uint64(uintptr(unsafe.Pointer(&lic[0]))), logLevel: 1, logSize: uint32(len(logBuf)),
		logBuf: uint64(uintptr(unsafe.Pointer(&logBuf[0])))}
	fd, _, errno := unix.Syscall(unix.SYS_BPF, 5, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	end := bytes.IndexByte(logBuf, 0)
	tail := logBuf[max(0, end-3000):end]
	t.Logf("fd %d errno %v\n%s", int(fd), errno, tail)
	if errno == 0 {
		unix.Close(int(fd))
	}
}
