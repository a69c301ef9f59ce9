package inet

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/dtrace-go/dtrace/internal/kernel"
	"github.com/dtrace-go/dtrace/internal/tracefs"
	"github.com/dtrace-go/dtrace/provider"
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// Kernel constants the prologues test.
const (
	ethPIP   = 0x0008 // htons(ETH_P_IP), as a little-endian load reads it
	ethPIPv6 = 0xdd86 // htons(ETH_P_IPV6)

	ipprotoTCP = 6
	ipprotoUDP = 17
	sockRaw    = 3 // SOCK_RAW: the kernel's TCP control socket (RSTs, time-wait ACKs)

	thSYN = 0x02
	thACK = 0x10

	// TCP states as the kernel numbers them; the D library's
	// TCP_STATE_* have the same values.
	tcpEstablished = 1
	tcpSynSent     = 2
	tcpSynRecv     = 3
	tcpFinWait2    = 5
	tcpTimeWait    = 6
	tcpClose       = 7
	tcpClosing     = 11
	tcpNewSynRecv  = 12 // a request socket (a SYN answered, no full socket yet)
)

// What a packet probe wants.
type proto int

const (
	protoIP     proto = iota // any IPv4 or IPv6 packet
	protoTCP                 // a TCP segment
	protoTCPSyn              // a TCP segment with SYN and without ACK
	protoUDP                 // a UDP datagram
)

// offsets are the kernel struct members the prologues read, from BTF.
type offsets struct {
	skbHead, skbData, skbNet, skbNetSize, skbProto, skbDev, skbSk, skbIif int32
	skState, skDport, skNum, skProto, skProtoSize, skType, skErr          int32
}

var (
	offsOnce sync.Once
	offs     offsets
	offsErr  error
)

func kernelOffsets() (*offsets, error) {
	offsOnce.Do(func() {
		o := &offs
		var err error
		get := func(dst, size *int32, st, member string) {
			if err != nil {
				return
			}
			var sz int32
			*dst, sz, err = ktrace.Offset(st, member)
			if size != nil {
				*size = sz
			}
		}
		get(&o.skbHead, nil, "sk_buff", "head")
		get(&o.skbData, nil, "sk_buff", "data")
		get(&o.skbNet, &o.skbNetSize, "sk_buff", "network_header")
		get(&o.skbProto, nil, "sk_buff", "protocol")
		get(&o.skbDev, nil, "sk_buff", "dev")
		get(&o.skbSk, nil, "sk_buff", "sk")
		get(&o.skbIif, nil, "sk_buff", "skb_iif")
		get(&o.skState, nil, "sock", "__sk_common.skc_state")
		get(&o.skDport, nil, "sock", "__sk_common.skc_dport")
		get(&o.skNum, nil, "sock", "__sk_common.skc_num")
		get(&o.skProto, &o.skProtoSize, "sock", "sk_protocol")
		get(&o.skType, nil, "sock", "sk_type")
		get(&o.skErr, nil, "sock", "sk_err")
		offsErr = err
	})
	return &offs, offsErr
}

// recordField returns the offset and size of a field of a tracefs
// event's record.
func recordField(group, event, name string) (int16, int, error) {
	root, err := kernel.MountTracefs()
	if err != nil {
		return 0, 0, err
	}
	f, err := tracefs.ReadFormat(root, group, event)
	if err != nil {
		return 0, 0, err
	}
	fl, ok := f.Field(name)
	if !ok {
		return 0, 0, fmt.Errorf("%s:%s has no field %s", group, event, name)
	}
	return int16(fl.Offset), fl.Size, nil
}

// loadField sets dst to a field of the event record, widened as signed
// says. It reads with bpf_probe_read_kernel, not a load from the context:
// the kernel refuses to attach a program to a tracepoint whose record is
// shorter than the furthest context offset the program loads from, and
// one program runs on the short record of netif_receive_skb too.
func loadField(e *ktrace.Emitter, dst asm.Register, group, event, name string, signed bool) error {
	off, size, err := recordField(group, event, name)
	if err != nil {
		return err
	}
	if size != 1 && size != 2 && size != 4 && size != 8 {
		return fmt.Errorf("%s:%s field %s has size %d", group, event, name, size)
	}
	e.Load(dst, asm.R6, int32(off), int32(size))
	if signed && size < 8 {
		shift := int32(64 - 8*size)
		e.Emit(asm.LSh.Imm(dst, shift), asm.ArSh.Imm(dst, shift))
	}
	return nil
}

// packet fills the arguments of a packet probe on net_dev_queue
// (outbound) or netif_receive_skb (inbound).
func packet(dir int, want proto) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		k, err := kernelOffsets()
		if err != nil {
			return err
		}
		event := "net_dev_queue"
		if dir == inbound {
			event = "netif_receive_skb"
		}
		if err := loadField(e, asm.R8, "net", event, "skbaddr", false); err != nil {
			return err
		}
		e.Emit(asm.JEq.Imm(asm.R8, 0, provider.SkipLabel))
		// A packet going out has its IP header where network_header
		// says; one coming in, at data (the driver pulled the link
		// header; network_header is set later).
		if dir == inbound {
			e.Load(asm.R9, asm.R8, k.skbData, 8)
		} else {
			headers(e, k)
		}
		return fill(e, k, dir, want)
	}
}

// headers sets R9 to the IP header of the sk_buff in R8 as
// skb->head + skb->network_header.
func headers(e *ktrace.Emitter, k *offsets) {
	e.Load(asm.R9, asm.R8, k.skbHead, 8)
	e.Load(asm.R0, asm.R8, k.skbNet, k.skbNetSize)
	e.Emit(asm.Add.Reg(asm.R9, asm.R0))
}

// fill sets the arguments of a packet probe from the sk_buff in R8 whose
// IP header is at R9, or skips the firing if the packet is not what the
// probe wants.
func fill(e *ktrace.Emitter, k *offsets, dir int, want proto) error {
	e.Emit(asm.JEq.Imm(asm.R9, 0, provider.SkipLabel))
	e.SetArg(0, asm.R8)
	e.SetArg(2, asm.R9)
	l4 := want != protoIP
	v6, parsed := e.Label(), e.Label()
	// The link layer's protocol, then the header's version, must agree.
	e.Load(asm.R0, asm.R8, k.skbProto, 2)
	e.Emit(asm.JEq.Imm(asm.R0, ethPIPv6, v6), asm.JNE.Imm(asm.R0, ethPIP, provider.SkipLabel))
	e.Load(asm.R0, asm.R9, 0, 1)
	e.Emit(asm.RSh.Imm(asm.R0, 4), asm.JNE.Imm(asm.R0, 4, provider.SkipLabel))
	if !l4 {
		e.SetArg(4, asm.R9)
	} else {
		// A fragment other than the first has no transport header.
		e.Load(asm.R0, asm.R9, 6, 2)
		e.Emit(asm.And.Imm(asm.R0, 0xff1f), asm.JNE.Imm(asm.R0, 0, provider.SkipLabel))
		e.Load(asm.R0, asm.R9, 9, 1)
		e.Emit(asm.JNE.Imm(asm.R0, l4Proto(want), provider.SkipLabel))
		e.Load(asm.R0, asm.R9, 0, 1)
		e.Emit(asm.And.Imm(asm.R0, 0xf), asm.LSh.Imm(asm.R0, 2), asm.Add.Reg(asm.R0, asm.R9))
		e.SetArg(4, asm.R0)
	}
	e.Emit(asm.Ja.Label(parsed))
	e.Mark(v6)
	e.Load(asm.R0, asm.R9, 0, 1)
	e.Emit(asm.RSh.Imm(asm.R0, 4), asm.JNE.Imm(asm.R0, 6, provider.SkipLabel))
	if !l4 {
		e.SetArg(5, asm.R9)
	} else {
		// Only a transport header right after the fixed header is
		// found (no extension headers).
		e.Load(asm.R0, asm.R9, 6, 1)
		e.Emit(asm.JNE.Imm(asm.R0, l4Proto(want), provider.SkipLabel),
			asm.Mov.Reg(asm.R0, asm.R9), asm.Add.Imm(asm.R0, 40))
		e.SetArg(4, asm.R0)
	}
	e.Mark(parsed)
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(7), int32(dir)))
	if want == protoTCPSyn {
		e.Emit(asm.LoadMem(asm.R1, asm.R7, e.Arg(4), asm.DWord))
		e.Load(asm.R0, asm.R1, 13, 1)
		e.Emit(asm.And.Imm(asm.R0, thSYN|thACK), asm.JNE.Imm(asm.R0, thSYN, provider.SkipLabel))
	}
	if want == protoIP {
		e.Load(asm.R0, asm.R8, k.skbDev, 8)
		e.SetArg(3, asm.R0)
	}
	if dir == inbound {
		// The kernel has not looked for the socket yet.
		return nil
	}
	e.Load(asm.R8, asm.R8, k.skbSk, 8)
	noSocket := e.Label()
	switch want {
	case protoIP:
		e.SetArg(1, asm.R8)
	case protoUDP:
		e.Emit(asm.JEq.Imm(asm.R8, 0, provider.SkipLabel))
		e.Load(asm.R0, asm.R8, k.skProto, k.skProtoSize)
		e.Emit(asm.JNE.Imm(asm.R0, ipprotoUDP, provider.SkipLabel))
		e.SetArg(1, asm.R8)
		e.SetArg(3, asm.R8)
	default:
		// A segment without a socket is being forwarded, unless it did
		// not come in on an interface: a reset or ACK the kernel
		// sends for no socket (IPv6's have none).
		own := e.Label()
		e.Emit(asm.JNE.Imm(asm.R8, 0, own), asm.LoadMem(asm.R8, asm.R7, e.Arg(0), asm.DWord))
		e.Load(asm.R0, asm.R8, k.skbIif, 4)
		e.Emit(asm.JNE.Imm(asm.R0, 0, provider.SkipLabel), asm.Ja.Label(noSocket))
		e.Mark(own)
		tcpSocket(e, k)
		e.Mark(noSocket)
	}
	return nil
}

func l4Proto(want proto) int32 {
	if want == protoUDP {
		return ipprotoUDP
	}
	return ipprotoTCP
}

// tcpSocket sets args[1], args[3] and the state (arg6) of a TCP segment
// going out from the socket in R8: a full socket is args[3] and its state
// is the connection's; a request socket (the SYN-ACK of a connection not
// yet accepted) is in SYN-RECEIVED, a time-wait socket in TIME-WAIT, and
// the control socket (a reset or ACK sent for no socket) in no state; none
// of them is a tcp_sock.
func tcpSocket(e *ktrace.Emitter, k *offsets) {
	req, tw, ctl, done := e.Label(), e.Label(), e.Label(), e.Label()
	e.Load(asm.R9, asm.R8, k.skState, 1)
	e.Emit(asm.JEq.Imm(asm.R9, tcpNewSynRecv, req), asm.JEq.Imm(asm.R9, tcpTimeWait, tw))
	e.Load(asm.R0, asm.R8, k.skType, 2)
	e.Emit(asm.JEq.Imm(asm.R0, sockRaw, ctl))
	e.SetArg(1, asm.R8)
	e.SetArg(3, asm.R8)
	e.SetArg(6, asm.R9)
	e.Emit(asm.Ja.Label(done))
	e.Mark(req)
	e.SetArg(1, asm.R8)
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(6), tcpSynRecv), asm.Ja.Label(done))
	e.Mark(tw)
	e.SetArg(1, asm.R8)
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(6), tcpTimeWait))
	e.Mark(ctl)
	e.Mark(done)
}

// stash makes a firing on netif_receive_skb (cookieStash) remember the
// segment, its sk_buff and its IP header, and end.
func stash(e *ktrace.Emitter, k *offsets) error {
	off, _, err := recordField("net", "netif_receive_skb", "skbaddr")
	if err != nil {
		return err
	}
	event := e.Label()
	e.Cookie()
	e.Emit(asm.JNE.Imm(asm.R0, cookieStash, event))
	e.Field(asm.R8, off, 8, false)
	e.Emit(asm.StoreMem(asm.R7, e.Stash(0), asm.R8, asm.DWord))
	e.Load(asm.R0, asm.R8, k.skbData, 8)
	e.Emit(asm.StoreMem(asm.R7, e.Stash(1), asm.R0, asm.DWord), e.Skip())
	e.Mark(event)
	return nil
}

// fromStash sets args[0], args[2] and args[4] to the segment last
// received on this CPU if it is a TCP segment for the socket in R8 (its
// ports are the socket's, or, with listener set, its destination port is
// the socket's local port), and jumps to miss if it is not.
func fromStash(e *ktrace.Emitter, k *offsets, listener bool, miss string) {
	v6, hdr := e.Label(), e.Label()
	e.Emit(asm.LoadMem(asm.R9, asm.R7, e.Stash(1), asm.DWord), asm.JEq.Imm(asm.R9, 0, miss))
	e.Load(asm.R0, asm.R9, 0, 1)
	e.Emit(asm.RSh.Imm(asm.R0, 4), asm.JEq.Imm(asm.R0, 6, v6), asm.JNE.Imm(asm.R0, 4, miss))
	e.Load(asm.R0, asm.R9, 9, 1)
	e.Emit(asm.JNE.Imm(asm.R0, ipprotoTCP, miss))
	e.Load(asm.R0, asm.R9, 0, 1)
	e.Emit(asm.And.Imm(asm.R0, 0xf), asm.LSh.Imm(asm.R0, 2), asm.Add.Reg(asm.R0, asm.R9))
	e.SetArg(4, asm.R0)
	e.Emit(asm.Ja.Label(hdr))
	e.Mark(v6)
	e.Load(asm.R0, asm.R9, 6, 1)
	e.Emit(asm.JNE.Imm(asm.R0, ipprotoTCP, miss), asm.Mov.Reg(asm.R0, asm.R9), asm.Add.Imm(asm.R0, 40))
	e.SetArg(4, asm.R0)
	// (The instruction a label marks sets R0.)
	e.Mark(hdr)
	// Its destination port (network order) is the socket's local port
	// (host order) ...
	e.Emit(asm.LoadMem(asm.R1, asm.R7, e.Arg(4), asm.DWord))
	e.Load(asm.R0, asm.R1, 2, 2)
	e.Emit(asm.HostTo(asm.BE, asm.R0, asm.Half))
	e.Emit(asm.StoreMem(asm.RFP, -24, asm.R0, asm.DWord))
	e.Load(asm.R0, asm.R8, k.skNum, 2)
	e.Emit(asm.LoadMem(asm.R1, asm.RFP, -24, asm.DWord), asm.JNE.Reg(asm.R0, asm.R1, miss))
	if !listener {
		// ... and its source port the socket's remote port.
		e.Emit(asm.LoadMem(asm.R1, asm.R7, e.Arg(4), asm.DWord))
		e.Load(asm.R0, asm.R1, 0, 2)
		e.Emit(asm.StoreMem(asm.RFP, -24, asm.R0, asm.DWord))
		e.Load(asm.R0, asm.R8, k.skDport, 2)
		e.Emit(asm.LoadMem(asm.R1, asm.RFP, -24, asm.DWord), asm.JNE.Reg(asm.R0, asm.R1, miss))
	}
	e.Emit(asm.LoadMem(asm.R0, asm.R7, e.Stash(0), asm.DWord))
	e.SetArg(0, asm.R0)
	e.SetArg(2, asm.R9)
}

// entered sets arg6 to state, the state the socket in R8 entered, and
// args[0], args[2] and args[4] to the segment last received on this CPU
// if it is the socket's (fromStash), else to nothing.
func entered(e *ktrace.Emitter, k *offsets, state int32) {
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(6), state))
	miss, done := e.Label(), e.Label()
	fromStash(e, k, false, miss)
	clearHeaders(e, miss, done)
}

// clearHeaders is where fromStash goes when the segment is not the
// event's: no headers.
func clearHeaders(e *ktrace.Emitter, miss, done string) {
	e.Emit(asm.Ja.Label(done))
	e.Mark(miss)
	for _, i := range []int{0, 2, 4} {
		e.Emit(provider.StoreImmDW(asm.R7, e.Arg(i), 0))
	}
	e.Mark(done)
}

// sockEvent starts a prologue on a tracepoint of a TCP socket: the stash
// part, then R8 = the socket (record field skaddr), args[1] and args[3]
// the socket, arg7 the direction.
func sockEvent(e *ktrace.Emitter, group, event string, dir int) (*offsets, error) {
	k, err := kernelOffsets()
	if err != nil {
		return nil, err
	}
	if err := stash(e, k); err != nil {
		return nil, err
	}
	if err := loadField(e, asm.R8, group, event, "skaddr", false); err != nil {
		return nil, err
	}
	e.Emit(asm.JEq.Imm(asm.R8, 0, provider.SkipLabel))
	e.SetArg(1, asm.R8)
	e.SetArg(3, asm.R8)
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(7), int32(dir)))
	return k, nil
}

// stateEvent starts a prologue on inet_sock_set_state (sockEvent with
// direction dir), skips the firings of sockets of other protocols than
// TCP (the record's protocol field) and leaves the state left in R0.
func stateEvent(e *ktrace.Emitter, dir int) (*offsets, error) {
	k, err := sockEvent(e, "sock", "inet_sock_set_state", dir)
	if err != nil {
		return nil, err
	}
	if err := loadField(e, asm.R0, "sock", "inet_sock_set_state", "protocol", false); err != nil {
		return nil, err
	}
	e.Emit(asm.JNE.Imm(asm.R0, ipprotoTCP, provider.SkipLabel))
	if err := loadField(e, asm.R0, "sock", "inet_sock_set_state", "oldstate", true); err != nil {
		return nil, err
	}
	return k, nil
}

// established: inet_sock_set_state of a TCP socket from state from to
// ESTABLISHED; the segment is the one that completed the handshake.
func established(from int32) func(e *ktrace.Emitter) error {
	return func(e *ktrace.Emitter) error {
		k, err := stateEvent(e, inbound)
		if err != nil {
			return err
		}
		e.Emit(asm.JNE.Imm(asm.R0, from, provider.SkipLabel))
		if err := loadField(e, asm.R0, "sock", "inet_sock_set_state", "newstate", true); err != nil {
			return err
		}
		e.Emit(asm.JNE.Imm(asm.R0, tcpEstablished, provider.SkipLabel))
		entered(e, k, tcpEstablished)
		return nil
	}
}

// connectRefused: tcp_receive_reset of a socket in SYN-SENT.
func connectRefused(e *ktrace.Emitter) error {
	k, err := sockEvent(e, "tcp", "tcp_receive_reset", inbound)
	if err != nil {
		return err
	}
	e.Load(asm.R0, asm.R8, k.skState, 1)
	e.Emit(asm.JNE.Imm(asm.R0, tcpSynSent, provider.SkipLabel))
	entered(e, k, tcpSynSent)
	return nil
}

// acceptRefused: tcp_send_reset answering a SYN (a connection request no
// socket takes); the arguments describe the SYN.
func acceptRefused(e *ktrace.Emitter) error {
	k, err := kernelOffsets()
	if err != nil {
		return err
	}
	if err := loadField(e, asm.R8, "tcp", "tcp_send_reset", "skbaddr", false); err != nil {
		return err
	}
	e.Emit(asm.JEq.Imm(asm.R8, 0, provider.SkipLabel))
	headers(e, k)
	return fill(e, k, inbound, protoTCPSyn)
}

// stateChange: inet_sock_set_state of a TCP socket. args[5] is the state
// left, arg6 the state entered.
func stateChange(e *ktrace.Emitter) error {
	k, err := stateEvent(e, stateDir)
	if err != nil {
		return err
	}
	e.SetArg(5, asm.R0)
	if err := loadField(e, asm.R9, "sock", "inet_sock_set_state", "newstate", true); err != nil {
		return err
	}
	// A close from FIN-WAIT-2 or CLOSING without an error is the
	// socket's replacement by a time-wait socket.
	set, checkErr := e.Label(), e.Label()
	e.Emit(
		asm.JNE.Imm(asm.R9, tcpClose, set),
		asm.LoadMem(asm.R0, asm.R7, e.Arg(5), asm.DWord),
		asm.JEq.Imm(asm.R0, tcpFinWait2, checkErr),
		asm.JNE.Imm(asm.R0, tcpClosing, set),
	)
	e.Mark(checkErr)
	e.Load(asm.R0, asm.R8, k.skErr, 4)
	e.Emit(asm.JNE.Imm(asm.R0, 0, set), asm.Mov.Imm(asm.R9, tcpTimeWait))
	e.Mark(set)
	e.SetArg(6, asm.R9)
	// A connection being accepted enters SYN-RECEIVED before kernels
	// older than 6.14 give its socket the addresses: then its ports and
	// addresses come from the segment.
	done, miss := e.Label(), e.Label()
	e.Emit(asm.JNE.Imm(asm.R9, tcpSynRecv, done))
	e.Load(asm.R0, asm.R8, k.skDport, 2)
	e.Emit(asm.JNE.Imm(asm.R0, 0, done))
	fromStash(e, k, true, miss)
	e.Emit(provider.StoreImmDW(asm.R7, e.Arg(3), 0), provider.StoreImmDW(asm.R7, e.Arg(7), inbound))
	clearHeaders(e, miss, done)
	return nil
}
