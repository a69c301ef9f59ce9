package perfetto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dtrace-go/dtrace/output"
	"github.com/dtrace-go/dtrace/output/jsonrec"
)

// This file places events on the timeline: slices opened and closed
// per thread, instants, and the names of the processes and threads.

// place turns one event into trace events.
func (r *Renderer) place(ev *Event) {
	if ev.Global {
		r.emit(&traceEvent{Name: ev.Name, Cat: "dtrace", Ph: "i", Ts: r.ts(ev.Time), Scope: "g",
			Args: map[string]any{"actions": ev.Actions}})
		return
	}
	k := trackKey{ev.Machine, ev.PID, ev.TID}
	t := r.tracks[k]
	if t == nil {
		t = &track{}
		r.tracks[k] = t
	}
	pid, tid := r.ids(k)
	when := max(ev.Time, t.last)
	r.name(k, ev, pid, tid, when)
	// The later clauses of one firing add their output to the
	// event of the first.
	if t.lastEv != nil && t.lastID == ev.Probe.ID && ev.Clause > t.lastCl {
		t.lastCl = ev.Clause
		if len(ev.Actions) > 0 {
			acts, _ := t.lastEv.Args["actions"].([]jsonrec.Action)
			t.lastEv.Args["actions"] = append(acts, ev.Actions...)
		}
		return
	}
	te := &traceEvent{Name: ev.Probe.Function, Cat: strings.TrimRight(ev.Probe.Provider, "0123456789"), Ts: r.ts(when), PID: pid, TID: tid,
		Args: map[string]any{"probe": ev.Probe.String(), "cpu": ev.CPU}}
	if len(ev.Actions) > 0 {
		te.Args["actions"] = ev.Actions
	}
	fn := ev.Probe.Provider + ":" + ev.Probe.Module + ":" + ev.Probe.Function
	switch ev.Probe.Name {
	case "entry":
		te.Ph = "B"
		t.stack = append(t.stack, fn)
	case "return":
		i := len(t.stack) - 1
		for i >= 0 && t.stack[i] != fn {
			i--
		}
		if i < 0 {
			// Its entry was not seen (tracing began inside it).
			r.unmatched++
			return
		}
		// Slices opened inside it whose return was missed end with it.
		for j := len(t.stack) - 1; j > i; j-- {
			r.emit(&traceEvent{Name: funcName(t.stack[j]), Ph: "E", Ts: r.ts(when), PID: pid, TID: tid,
				Args: map[string]any{"closed_by_outer_return": true}})
			r.unclosed++
			r.slices++
		}
		t.stack = t.stack[:i]
		te.Ph = "E"
		r.slices++
	default:
		te.Ph = "i"
		te.Scope = "t"
		if te.Name == "" {
			te.Name = ev.Probe.Name
		} else {
			te.Name += ":" + ev.Probe.Name
		}
	}
	if te.Name == "" {
		te.Name = fmt.Sprintf("probe %d", ev.Probe.ID)
	}
	r.emit(te)
	t.last = when
	t.lastEv, t.lastID, t.lastCl = te, ev.Probe.ID, ev.Clause
}

// funcName is the function of a provider:module:function.
func funcName(fn string) string { return fn[strings.LastIndexByte(fn, ':')+1:] }

// name writes the metadata events that name a track's process and
// thread, once.
func (r *Renderer) name(k trackKey, ev *Event, pid, tid int, when uint64) {
	if r.named[k] {
		return
	}
	r.named[k] = true
	proc, thread := ev.Process, ev.Thread
	if proc == "" {
		proc = "pid " + strconv.Itoa(k.pid)
	}
	if thread == "" {
		thread = proc
	}
	machine := k.machine
	if machine == "" {
		machine = r.local
	}
	if len(r.machines) > 1 {
		proc = machine + ": " + proc
	}
	pk := trackKey{machine: k.machine, pid: k.pid, tid: -1}
	if !r.named[pk] {
		r.named[pk] = true
		args := map[string]any{"name": proc, "machine": machine}
		if ev.Container != "" {
			args["container"] = ev.Container
			if id := output.ContainerID(ev.Container); id != "" {
				args["container_id"] = id
			}
		}
		r.emit(&traceEvent{Name: "process_name", Ph: "M", Ts: r.ts(when), PID: pid, TID: pid, Args: args})
	}
	r.emit(&traceEvent{Name: "thread_name", Ph: "M", Ts: r.ts(when), PID: pid, TID: tid, Args: map[string]any{"name": thread}})
}
