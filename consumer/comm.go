package consumer

import (
	"bytes"
	"encoding/binary"
	"sync"
)

// The kernel's names of threads. While records are stamped (they carry
// the pid and tid that wrote them), each CPU's perf ring also carries
// the kernel's side-band records of that CPU's tasks: a thread's name
// at exec and when it renames itself (PERF_RECORD_COMM), forks
// (PERF_RECORD_FORK: a new thread has its parent's name) and exits
// (PERF_RECORD_EXIT). A consumer that names the writers of records
// (a timeline's process tracks, OTLP's service.name) asks here first:
// a process that lived a millisecond is gone from /proc long before its
// records are rendered, but not from here.

// commKeep is how many exited threads' names are kept: records of a
// thread are rendered some time after it exits (a second's grace for
// spans), and a busy host forks thousands of threads a second.
const commKeep = 8192

// comms holds the names of threads by tid.
type comms struct {
	mu     sync.Mutex
	names  map[uint32]commEntry
	exited []commRef // oldest first
	gen    uint64
}

type commEntry struct {
	name string
	gen  uint64 // which life of the tid
}

type commRef struct {
	tid uint32
	gen uint64
}

// set names thread tid.
func (c *comms) set(tid uint32, name string) {
	if c.names == nil {
		c.names = map[uint32]commEntry{}
	}
	c.gen++
	c.names[tid] = commEntry{name: name, gen: c.gen}
}

// sideband takes a side-band record (its type and body, the header
// removed): COMM, FORK, EXIT. Others are ignored.
func (c *comms) sideband(typ uint32, body []byte) {
	const (
		recordComm = 3 // PERF_RECORD_COMM: pid, tid, comm[]
		recordExit = 4 // PERF_RECORD_EXIT: pid, ppid, tid, ptid, time
		recordFork = 7 // PERF_RECORD_FORK: the same
	)
	if len(body) < 8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch typ {
	case recordComm:
		name := body[8:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		c.set(binary.NativeEndian.Uint32(body[4:]), string(name))
	case recordFork:
		if len(body) < 16 {
			return
		}
		tid, ptid := binary.NativeEndian.Uint32(body[8:]), binary.NativeEndian.Uint32(body[12:])
		if p, ok := c.names[ptid]; ok {
			c.set(tid, p.name)
		}
	case recordExit:
		if len(body) < 16 {
			return
		}
		tid := binary.NativeEndian.Uint32(body[8:])
		e, ok := c.names[tid]
		if !ok {
			return
		}
		c.exited = append(c.exited, commRef{tid, e.gen})
		if len(c.exited) > commKeep {
			old := c.exited[0]
			c.exited = c.exited[1:]
			// Unless the tid has lived again since.
			if e, ok := c.names[old.tid]; ok && e.gen == old.gen {
				delete(c.names, old.tid)
			}
		}
	}
}

// name is thread tid's name, "" when none was reported.
func (c *comms) name(tid uint32) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.names[tid].name
}
