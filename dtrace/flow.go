package dtrace

import (
	"fmt"

	"github.com/dtrace-go/dtrace/dlang/syntax"
	"github.com/dtrace-go/dtrace/provider"
	ioprov "github.com/dtrace-go/dtrace/provider/io"
)

// flowBefore and flowAfter are the D programs that carry flow variables
// (beyond DTrace; docs/FLOW.md) from one thread to another, added to a
// handle's programs once one of them uses flow-> or flowid. Their clauses
// record nothing, so they print nothing. flowBefore's run before the
// user's clauses, so that a read's return already sees the flow the bytes
// brought.
//
// A pipe or FIFO is known at the system call's entry, while the fd is
// surely open, by the file behind it (curthread->files->fdt->fd[fd]):
// its pipe_inode_info is the stream both ends share. Only such calls
// keep thread-locals until their return. A write files its flow at entry
// for the bytes it asks to write, before a reader can see them, and
// corrects the count at return; a writev, whose count is known only at
// return, files it there.
const flowBefore = `
self uint64_t __flow_stream;
self int64_t __flow_at;
self int64_t __flow_asked;
self int __flow_dgram;
self uint64_t __flow_buf;

proc:::create, proc:::lwp-create
{
	__flow_fork(((struct task_struct *)arg0)->pid);
}

proc:::lwp-exit
{
	__flow_exit();
}

syscall::read:return, syscall::readv:return, syscall::recvfrom:return, syscall::recvmsg:return
/self->__flow_stream/
{
	__flow_recv(self->__flow_stream, arg0, self->__flow_dgram, self->__flow_buf);
	self->__flow_stream = 0;
	self->__flow_dgram = 0;
	self->__flow_buf = 0;
}
`

// flowIO are the block I/O transports, which run before the user's
// clauses: a bio carries the flow of the thread that submits it;
// io:::done sees the flow of its bio (io:::start fires as the bio is
// submitted, in the submitter's context, whose flow it sees). They
// are added only when a program enables io probes: bio-done and
// io:::done fire in interrupts, and a program that interrupts another on
// its CPU shares its scratch memory.
const flowIO = `
__flow_io:::bio-queue
{
	__flow_bio(arg0);
}

__flow_io:::bio-done
{
	__flow_bio_done(arg0);
}

io:::done
{
	__flow_io((uint64_t)arg0);
}
`

// flowAfter are the transports that run after the user's clauses: a
// write's entry files the flow as the user's clauses at that entry left it.
const flowAfter = `
syscall::read:entry, syscall::readv:entry, syscall::recvfrom:entry, syscall::recvmsg:entry,
syscall::write:entry, syscall::writev:entry, syscall::sendto:entry, syscall::sendmsg:entry
{
	this->__flow_file = (uint64_t)arg0 < curthread->files->fdt->max_fds ?
	    curthread->files->fdt->fd[arg0] : (struct file *)0;
	this->__flow_mode = this->__flow_file != 0 ?
	    this->__flow_file->f_inode->i_mode & 0170000 : 0;
	this->__flow_sk = this->__flow_mode == 0140000 ?
	    ((struct socket *)this->__flow_file->private_data)->sk : (struct sock *)0;
	this->__flow_family = this->__flow_sk != 0 ? this->__flow_sk->__sk_common.skc_family : 0;
	this->__flow_dgram = this->__flow_sk != 0 && this->__flow_sk->sk_type == 2;
	/* An eventfd (an anonymous inode named [eventfd]) is a counter. */
	this->__flow_counter = this->__flow_file != 0 && this->__flow_mode != 0010000 &&
	    this->__flow_mode != 0140000 && this->__flow_file->f_path.dentry->d_name.len == 9 &&
	    stringof(this->__flow_file->f_path.dentry->d_name.name) == "[eventfd]";
	/*
	 * An inet socket's ends: the local and remote address and port. A
	 * connection's direction is named by both ends (sender's first), a
	 * datagram's by the receiver's port (an unconnected receiver has no
	 * remote end).
	 */
	this->__flow_la = this->__flow_family == 2 ? this->__flow_sk->__sk_common.skc_rcv_saddr : 0;
	this->__flow_lp = this->__flow_family == 2 ? this->__flow_sk->__sk_common.skc_num : 0;
	this->__flow_ra = this->__flow_family == 2 ? this->__flow_sk->__sk_common.skc_daddr : 0;
	this->__flow_rp = this->__flow_family == 2 ? ntohs(this->__flow_sk->__sk_common.skc_dport) : 0;
}

syscall::write:entry, syscall::writev:entry, syscall::sendto:entry, syscall::sendmsg:entry
{
	self->__flow_stream =
	    this->__flow_mode == 0010000 || this->__flow_counter ? (uint64_t)this->__flow_file->private_data :
	    this->__flow_family == 1 ? (uint64_t)((struct unix_sock *)this->__flow_sk)->peer :
	    this->__flow_family == 2 && this->__flow_rp != 0 ? (this->__flow_dgram ?
	    0x1000000000000 | this->__flow_rp :
	    (uint64_t)(uint32_t)(this->__flow_la ^ this->__flow_rp) << 32 |
	    (uint32_t)(this->__flow_ra ^ this->__flow_lp << 16)) : 0;
	self->__flow_dgram = this->__flow_dgram;
}

syscall::read:entry, syscall::readv:entry, syscall::recvfrom:entry, syscall::recvmsg:entry
{
	self->__flow_stream =
	    this->__flow_mode == 0010000 || this->__flow_counter ? (uint64_t)this->__flow_file->private_data :
	    this->__flow_family == 1 ? (uint64_t)this->__flow_sk :
	    this->__flow_family == 2 ? (this->__flow_dgram ?
	    0x1000000000000 | this->__flow_lp :
	    (uint64_t)(uint32_t)(this->__flow_ra ^ this->__flow_lp) << 32 |
	    (uint32_t)(this->__flow_la ^ this->__flow_rp << 16)) : 0;
	self->__flow_dgram = this->__flow_counter ? 2 : this->__flow_dgram;
}

syscall::read:entry, syscall::recvfrom:entry
/self->__flow_stream/
{
	self->__flow_buf = arg1;
}

syscall::write:entry, syscall::sendto:entry
/self->__flow_stream/
{
	self->__flow_at = __flow_send(self->__flow_stream, arg2, arg1);
	self->__flow_asked = arg2;
}

syscall::write:return, syscall::sendto:return
/self->__flow_at/
{
	__flow_sent(self->__flow_stream, self->__flow_at - 1, self->__flow_asked, arg0);
	self->__flow_at = 0;
	self->__flow_asked = 0;
}

syscall::writev:return, syscall::sendmsg:return
/self->__flow_stream/
{
	__flow_send(self->__flow_stream, arg0, 0);
}

syscall::write:return, syscall::writev:return, syscall::sendto:return, syscall::sendmsg:return
{
	self->__flow_stream = 0;
	self->__flow_dgram = 0;
}
`

// usesFlow reports whether a program names a flow variable, flowid or
// newflow().
func usesFlow(p *syntax.Program) bool {
	found := false
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ScopedVar:
			// Its name (self->flowid) is no use of flowid.
			found = found || n.Scope == syntax.ScopeFlow
			return false
		case *syntax.MemberExpr:
			// Nor is a member's (curthread->flowid).
			syntax.Inspect(n.X, visit)
			return false
		case *syntax.Ident:
			found = found || ((n.Name == "flowid" || n.Name == "newflow") && !n.Scoped && n.Module == "")
		}
		return !found
	}
	syntax.Inspect(p, visit)
	return found
}

// usesIO reports whether a program has a probe description that may
// name an io probe.
func usesIO(p *syntax.Program) bool {
	found := false
	syntax.Inspect(p, func(n syntax.Node) bool {
		if d, ok := n.(*syntax.ProbeDesc); ok {
			pd, err := provider.ParseDesc(d.Text)
			found = found || err != nil || provider.Match(pd.Provider, ioprov.Name)
		}
		return !found
	})
	return found
}

// flowPrograms returns the transports of flow variables that run before
// and after the user's clauses, parsed once, when ast or a program
// compiled before uses them; none otherwise. The block I/O ones come
// once a program also enables io probes.
func (h *Handle) flowPrograms(ast *syntax.Program) (before, after []*syntax.Program, err error) {
	h.usesIO = h.usesIO || usesIO(ast)
	if h.flow == nil && usesFlow(ast) {
		for i, text := range []string{flowBefore, flowAfter} {
			p, err := h.parseFlow(i, text)
			if err != nil {
				return nil, nil, err
			}
			h.flow = append(h.flow, p)
		}
	}
	if h.flow == nil {
		return nil, nil, nil
	}
	if h.usesIO && h.flowIO == nil {
		if h.flowIO, err = h.parseFlow(2, flowIO); err != nil {
			return nil, nil, err
		}
	}
	before = h.flow[:1]
	if h.flowIO != nil {
		before = append(before[:1:1], h.flowIO)
	}
	return before, h.flow[1:], nil
}

func (h *Handle) parseFlow(i int, text string) (*syntax.Program, error) {
	return h.parse(Source{Name: fmt.Sprintf("flow transports %d", i), Text: text, Kind: SpecProgram})
}
