//go:build linux

package dtrace

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dtrace-go/dtrace/loader"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/pid"
	"github.com/dtrace-go/dtrace/symbol"
)

// follower keeps the pid and USDT probes of the traced processes in step
// with the objects they load and unload while tracing runs (dlopen,
// dlclose), as dtrace-utils does through rtld_db: the link-map watcher
// (pid.LinkMapWatcher) says when a process's link map changed; the
// process's snapshot is read again, the clauses' descriptions are matched
// against it, the probes that are new are enabled (a plan extension and
// programs of their own, one loader.Extension per object) and those of
// objects that are gone are detached. docs/USDT.md tells the design.
type follower struct {
	// mu is held by Work while it consumes and by a rescan, so that the
	// registry, plan and programs never change under the consumer.
	mu sync.Mutex
	w  *pid.LinkMapWatcher
	// descs are, per clause, the descriptions that may name probes of a
	// followed process.
	descs [][]provider.Desc
	lopts loader.Options
	// attached holds the ids of the probes enabled (at the start or
	// since); units the extensions made since, by process and object.
	attached map[uint32]bool
	units    []followUnit
	closed   bool
	// announce, when some description may name the USDT probes of
	// processes started later, holds those processes as they announce
	// themselves (see announceWatcher); announcedPids are those
	// processes, whose rescans match announceDescs.
	announce      *announceWatcher
	announcedPids map[int]bool
	// inPass is set while the consumer's pass holds mu.
	inPass bool
}

// followUnit is the probes of one object of a process enabled at once.
type followUnit struct {
	pid    int
	module string
	e      *loader.Extension
}

// followProbes is how many probes added while tracing dt_probes has room
// for (a slot of 256 bytes each); probes past it have no names.
const followProbes = 4096

// followDescs returns, per clause, the descriptions whose provider field
// may name a process's pid or USDT probes: empty, a glob, or ending in a
// process id; but not BEGIN, END and ERROR alone, which name the dtrace
// provider's probes (and would otherwise have every -c run follow its
// process).
func (h *Handle) followDescs() [][]provider.Desc {
	out := make([][]provider.Desc, len(h.spec.Clauses))
	for ci, c := range h.spec.Clauses {
		for _, s := range c.Probes {
			d, err := provider.ParseDesc(s)
			if err != nil || d.DtraceOnly() {
				continue
			}
			n := len(d.Provider)
			if n == 0 || provider.HasGlob(d.Provider) || d.Provider[n-1] >= '0' && d.Provider[n-1] <= '9' {
				out[ci] = append(out[ci], d)
			}
		}
	}
	return out
}

// followPids returns the processes whose objects are followed: the -c
// or -p target and those the pid and USDT descriptions named.
func (h *Handle) followPids() []int {
	set := map[int]bool{}
	if h.conf.Target != 0 {
		set[h.conf.Target] = true
	}
	for _, p := range h.pidp.Pids() {
		set[p] = true
	}
	for _, p := range h.usdtp.Pids() {
		set[p] = true
	}
	var out []int
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

// announceDescs returns, per clause, the descriptions that may name the
// USDT probes of a process started while tracing runs: their provider
// field is a glob (test_prov*: test_prov1234 is one), made here
// the provider field that names the announced process's providers alone
// (the pattern with its pid appended: test_prov*1234, which the usdt
// provider takes as the providers of process 1234 test_prov* matches).
func (h *Handle) announceDescs(pid int) ([][]provider.Desc, bool) {
	out := h.followDescs()
	any := false
	for ci, ds := range out {
		var keep []provider.Desc
		for _, d := range ds {
			// An empty provider field (tick-1s, profile-97) would
			// match too, but turning the watcher on for it would put
			// a program on every system call of the machine for the
			// most common descriptions there are: only a provider
			// named with a glob asks for processes started later.
			if !provider.HasGlob(d.Provider) {
				continue
			}
			if pid != 0 {
				d.Provider += strconv.Itoa(pid)
			}
			keep = append(keep, d)
			any = true
		}
		out[ci] = keep
	}
	return out, any
}

// mayFollow reports whether probes may be added while tracing: some
// description may name probes of a process there is to follow.
func (h *Handle) mayFollow() bool {
	if _, announce := h.announceDescs(0); announce {
		return true // processes started later
	}
	if len(h.followPids()) == 0 {
		return false
	}
	for _, ds := range h.followDescs() {
		if len(ds) > 0 {
			return true
		}
	}
	return false
}

// startFollowing watches the link maps of the followed processes, once
// the program's probes are attached. A process it cannot watch (no
// dynamic linker) keeps the probes it had.
func (h *Handle) startFollowing(plan *loader.Plan, lopts loader.Options) {
	if !h.mayFollow() {
		return
	}
	_, announce := h.announceDescs(0)
	w, err := pid.NewLinkMapWatcher()
	if err != nil {
		h.debugf("not following libraries: %v", err)
		return
	}
	f := &follower{w: w, descs: h.followDescs(), lopts: lopts, attached: map[uint32]bool{}}
	for _, pp := range plan.Probes {
		f.attached[pp.Probe.ID] = true
	}
	for _, p := range h.followPids() {
		// The snapshot the probes were made from, which maps the
		// dynamic linker the watcher probes as a new read would.
		proc, err := h.sym.Process(p)
		if err == nil {
			err = w.Watch(proc, 0)
		}
		if err != nil {
			h.debugf("not following the libraries of process %d: %v", p, err)
		}
	}
	h.follow = f
	if announce {
		a, err := newAnnounceWatcher(h.announced)
		if err != nil {
			h.debugf("not watching for processes announcing their providers: %v", err)
			return
		}
		f.mu.Lock()
		f.announce = a
		f.mu.Unlock()
	}
}

// announced enables the probes of process pid, which announced itself
// (announceWatcher) and is stopped until this returns, that the
// descriptions name, and follows its libraries.
func (h *Handle) announced(pid int) {
	f := h.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	if f.announcedPids == nil {
		f.announcedPids = map[int]bool{}
	}
	f.announcedPids[pid] = true
	h.rescan(pid)
	proc, err := symbol.ReadProcess(pid)
	if err == nil {
		err = f.w.Watch(proc, 0)
	}
	if err != nil {
		h.debugf("not following the libraries of process %d: %v", pid, err)
	}
}

// followProcess holds a created process's main thread (which dtrace
// ptraces) at each change of its link map until the probes are in step
// (Process.held), so that a function of a library it dlopen()s is traced
// from its first call.
func (h *Handle) followProcess(p *Process) {
	f := h.follow
	if f == nil || !p.created || f.w.SetHold(p.pid, p.pid) != nil {
		return
	}
	p.held = func(tgid int, sig unix.Signal) bool {
		if sig != pid.HoldSignal || !f.w.TakeHold(tgid) {
			return false
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.closed {
			h.rescan(tgid)
		}
		return true
	}
}

// consumerWaiting runs wait (system()'s wait for its command) with f.mu,
// which the consumer's pass holds, let go: a process the command starts
// that announces itself is held until a rescan, which takes f.mu,
// enables its probes. The consumer does nothing else meanwhile.
func (h *Handle) consumerWaiting(wait func()) {
	f := h.follow
	if f == nil || !f.inPass {
		wait()
		return
	}
	f.inPass = false
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inPass = true
	}()
	wait()
}

// followChanges rescans the processes whose link maps changed (without a
// hold: a -p process, or a thread dtrace does not trace). The caller
// holds f.mu.
func (h *Handle) followChanges() {
	f := h.follow
	if f == nil || f.closed {
		return
	}
	for _, p := range f.w.Changed() {
		h.rescan(p)
	}
}

// stopFollowing detaches the watcher and the probes added while tracing.
func (h *Handle) stopFollowing() error {
	f := h.follow
	if f == nil {
		return nil
	}
	// Closed first, without f.mu, which handling an announced process
	// takes: it resumes the processes it stopped.
	f.mu.Lock()
	a := f.announce
	f.announce = nil
	f.mu.Unlock()
	var aerr error
	if a != nil {
		aerr = a.Close()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return aerr
	}
	f.closed = true
	err := f.w.Close()
	if err == nil {
		err = aerr
	}
	for _, u := range f.units {
		if cerr := u.e.Close(); err == nil {
			err = cerr
		}
	}
	f.units = nil
	return err
}

// ofProcess reports whether p is a pid or USDT probe of process pid
// (pid1234, myprov1234).
func (h *Handle) ofProcess(p *provider.Probe, pid int) bool {
	if p.Owner != provider.Provider(h.pidp) && p.Owner != provider.Provider(h.usdtp) {
		return false
	}
	s := strconv.Itoa(pid)
	n := len(p.Provider) - len(s)
	return n > 0 && p.Provider[n:] == s && (p.Provider[n-1] < '0' || p.Provider[n-1] > '9')
}

// rescan brings the probes of process pid in step with what it maps now:
// probes that the descriptions name and that are not enabled are enabled,
// one extension per object; extensions none of whose probes are named
// any more (their object was unloaded) are detached. Probes enabled at
// the start stay (they fire no more once their object is gone). The
// caller holds f.mu.
func (h *Handle) rescan(pid int) {
	if h.follow.announcedPids[pid] {
		descs, _ := h.announceDescs(pid)
		h.rescanWith(pid, descs, func(pv provider.Provider) bool { return pv == provider.Provider(h.usdtp) })
		return
	}
	h.rescanWith(pid, h.follow.descs, func(pv provider.Provider) bool {
		return pv == provider.Provider(h.pidp) || pv == provider.Provider(h.usdtp)
	})
}

// rescanWith is rescan matching descs (per clause) against the providers
// mine accepts.
func (h *Handle) rescanWith(pid int, descs [][]provider.Desc, mine func(provider.Provider) bool) {
	f := h.follow
	h.pidp.Forget(pid)
	if _, err := h.sym.Snapshot(pid); err != nil {
		return // gone
	}
	named := map[uint32]bool{}
	byModule := map[string][][]*provider.Probe{}
	h.regMu.Lock()
	for ci, ds := range descs {
		for _, d := range ds {
			ps, err := h.reg.Rematch(d, mine)
			if err != nil {
				continue
			}
			for _, p := range ps {
				if !h.ofProcess(p, pid) {
					continue
				}
				named[p.ID] = true
				if f.attached[p.ID] {
					continue
				}
				if byModule[p.Module] == nil {
					byModule[p.Module] = make([][]*provider.Probe, len(descs))
				}
				byModule[p.Module][ci] = append(byModule[p.Module][ci], p)
			}
		}
	}
	h.regMu.Unlock()
	kept := f.units[:0]
	for _, u := range f.units {
		if u.pid != pid || anyNamed(u.e.Probes(), named) {
			kept = append(kept, u)
			continue
		}
		if err := u.e.Close(); err != nil {
			fmt.Fprintf(h.conf.Stderr, "dtrace: failed to disable the probes of %s in process %d: %v\n", u.module, pid, err)
		}
		for _, id := range u.e.Probes() {
			delete(f.attached, id)
		}
		h.debugf("process %d: detached the probes of %s", pid, u.module)
	}
	f.units = kept
	mods := make([]string, 0, len(byModule))
	for m := range byModule {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		pps := h.objs.Plan().Extend(h.spec, byModule[m])
		for _, pp := range pps {
			// Tried once: a probe that cannot be enabled is not tried
			// again at every change of the link map.
			f.attached[pp.Probe.ID] = true
		}
		e, err := h.objs.Add(pps, f.lopts)
		if err == nil {
			err = h.fillProbeNames(pps)
		}
		if err != nil {
			if unix.Kill(pid, 0) == unix.ESRCH {
				// Gone meanwhile (an announced process another
				// dtrace resumed): nothing to say.
				h.debugf("process %d exited: %v", pid, err)
			} else {
				fmt.Fprintf(h.conf.Stderr, "dtrace: failed to enable the probes of %s in process %d: %v\n", m, pid, err)
			}
			if e != nil {
				_ = e.Close()
			}
			continue
		}
		f.units = append(f.units, followUnit{pid: pid, module: m, e: e})
		h.debugf("process %d: enabled %d probes of %s", pid, len(pps), m)
	}
}

func anyNamed(ids []uint32, named map[uint32]bool) bool {
	for _, id := range ids {
		if named[id] {
			return true
		}
	}
	return false
}

// lockedProbes is the registry as the consumer looks probes up, from
// its reader threads too, while a rescan may add to it.
type lockedProbes struct{ h *Handle }

func (l lockedProbes) Probe(id uint32) *provider.Probe {
	l.h.regMu.RLock()
	defer l.h.regMu.RUnlock()
	return l.h.reg.Probe(id)
}
