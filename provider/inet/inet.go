// Package inet is DTrace's ip, tcp and udp providers on Linux
// tracepoints, with dtrace-utils' probes and the argument types the D
// library's translators (ip.d, tcp.d, udp.d) make from the kernel's
// packets and sockets:
//
//	ip:::send, ip:::receive      args[0..5]: pktinfo_t, csinfo_t, ipinfo_t, ifinfo_t, ipv4info_t, ipv6info_t
//	tcp:::*                      args[0..4]: pktinfo_t, csinfo_t, ipinfo_t, tcpsinfo_t, tcpinfo_t
//	                             (state-change: args[5] tcplsinfo_t, the state left)
//	udp:::send, udp:::receive    args[0..4]: pktinfo_t, csinfo_t, ipinfo_t, udpsinfo_t, udpinfo_t
//
// The probes run on tracepoints every kernel we serve has (6.1 to 6.18),
// whether or not it offers kprobes or fentry:
//
//	probe                    runs on                            fires
//	ip:::send                net:net_dev_queue                  an IPv4/IPv6 packet goes to a device
//	ip:::receive             net:netif_receive_skb              an IPv4/IPv6 packet comes from a device
//	udp:::send/receive       the same, UDP                      (send: from a UDP socket)
//	tcp:::send/receive       the same, TCP                      (send: from a TCP socket or its
//	                                                            listener or control socket)
//	tcp:::connect-request    net:net_dev_queue, SYN without ACK
//	tcp:::connect-established sock:inet_sock_set_state, SYN-SENT to ESTABLISHED
//	tcp:::accept-established sock:inet_sock_set_state, SYN-RECEIVED to ESTABLISHED
//	tcp:::connect-refused    tcp:tcp_receive_reset in SYN-SENT
//	tcp:::accept-refused     tcp:tcp_send_reset answering a SYN
//	tcp:::state-change       sock:inet_sock_set_state of a TCP socket
//
// Where a probe's tracepoint has the socket but not the segment that
// caused the event (the established and refused probes, state changes),
// the program also runs on net:netif_receive_skb and keeps the last
// segment received on the CPU (abi.MStateStash): the kernel processes a
// segment on the CPU that received it, right after that tracepoint, so
// the segment is the event's when its ports are the socket's; otherwise
// the headers are NULL and the translators take addresses and ports from
// the socket.
//
// What differs from dtrace-utils (which runs on kernel functions): a
// received segment is seen at the device, before the kernel finds its
// socket, so tcp:::receive and udp:::receive have no socket (args[1] and
// args[3] NULL; the translators read ports and addresses from the
// headers) and fire for every segment received, whether or not a socket
// takes it; tcps_state of a received segment is 0 (TCP_STATE_IDLE). A
// socket's move to TIME_WAIT has no tracepoint: the kernel replaces the
// socket by a time-wait one and closes it, so state-change reports a
// close from FIN-WAIT-2 or CLOSING without an error as the move to
// TIME_WAIT. The state-change to SYN-RECEIVED of a connection being
// accepted comes before kernels older than 6.14 copy its addresses to
// the new socket: its args[3] is then NULL, and ports and addresses come
// from the segment.
package inet

import (
	"github.com/dtrace-go/dtrace/provider/ktrace"
)

// Names and module of the providers, as in DTrace for Linux.
const (
	IP     = "ip"
	TCP    = "tcp"
	UDP    = "udp"
	Module = "vmlinux"
)

// Directions as the translators read them in arg7 (net.d).
const (
	outbound = 0
	inbound  = 1
	stateDir = 2
)

var (
	ipArgs   = []string{"struct sk_buff *", "struct sock *", "void_ip_t *", "struct net_device *", "struct iphdr *", "struct ipv6hdr *"}
	ipXArgs  = []string{"pktinfo_t *", "csinfo_t *", "ipinfo_t *", "ifinfo_t *", "ipv4info_t *", "ipv6info_t *"}
	tcpArgs  = []string{"struct sk_buff *", "struct sock *", "__dtrace_tcp_void_ip_t *", "struct tcp_sock *", "struct tcphdr *"}
	tcpXArgs = []string{"pktinfo_t *", "csinfo_t *", "ipinfo_t *", "tcpsinfo_t *", "tcpinfo_t *"}
	udpArgs  = []string{"struct sk_buff *", "struct sock *", "void_ip_t *", "struct udp_sock *", "struct udphdr *"}
	udpXArgs = []string{"pktinfo_t *", "csinfo_t *", "ipinfo_t *", "udpsinfo_t *", "udpinfo_t *"}
)

// Cookies of a probe's tracepoints, where it has several.
const (
	cookieEvent = 1 // the event's own tracepoint
	cookieStash = 2 // netif_receive_skb: remember the segment
)

func sendSource() []ktrace.Source    { return ktrace.Sources("net", "net_dev_queue") }
func receiveSource() []ktrace.Source { return ktrace.Sources("net", "netif_receive_skb") }

// withStash runs the probe on group:name and keeps the segments received.
func withStash(group, name string) []ktrace.Source {
	return []ktrace.Source{
		{Group: group, Name: name, Cookie: cookieEvent},
		{Group: "net", Name: "netif_receive_skb", Cookie: cookieStash},
	}
}

// NewIP returns the ip provider.
func NewIP() *ktrace.Provider { return packets(IP, protoIP, ipArgs, ipXArgs) }

// NewUDP returns the udp provider.
func NewUDP() *ktrace.Provider { return packets(UDP, protoUDP, udpArgs, udpXArgs) }

// packets returns the provider name whose receive and send probes fire
// for every packet of protocol want, with arguments of types args
// (translated to xargs).
func packets(name string, want proto, args, xargs []string) *ktrace.Provider {
	return ktrace.New(name, []ktrace.Spec{
		{Module: Module, Name: "receive", Kind: ktrace.Event, Sources: receiveSource(), Args: args, XArgs: xargs,
			Prologue: packet(inbound, want)},
		{Module: Module, Name: "send", Kind: ktrace.Event, Sources: sendSource(), Args: args, XArgs: xargs,
			Prologue: packet(outbound, want)},
	})
}

// NewTCP returns the tcp provider.
func NewTCP() *ktrace.Provider {
	stateArgs := append(append([]string{}, tcpArgs...), "int")
	stateXArgs := append(append([]string{}, tcpXArgs...), "tcplsinfo_t *")
	specs := []ktrace.Spec{
		{Name: "accept-established", Sources: withStash("sock", "inet_sock_set_state"),
			Prologue: established(tcpSynRecv)},
		{Name: "accept-refused", Sources: ktrace.Sources("tcp", "tcp_send_reset"), Prologue: acceptRefused},
		{Name: "connect-established", Sources: withStash("sock", "inet_sock_set_state"),
			Prologue: established(tcpSynSent)},
		{Name: "connect-refused", Sources: withStash("tcp", "tcp_receive_reset"), Prologue: connectRefused},
		{Name: "connect-request", Sources: sendSource(), Prologue: packet(outbound, protoTCPSyn)},
		{Name: "receive", Sources: receiveSource(), Prologue: packet(inbound, protoTCP)},
		{Name: "send", Sources: sendSource(), Prologue: packet(outbound, protoTCP)},
		{Name: "state-change", Sources: withStash("sock", "inet_sock_set_state"), Prologue: stateChange,
			Args: stateArgs, XArgs: stateXArgs},
	}
	for i := range specs {
		specs[i].Module = Module
		specs[i].Kind = ktrace.Event
		if specs[i].Args == nil {
			specs[i].Args, specs[i].XArgs = tcpArgs, tcpXArgs
		}
	}
	return ktrace.New(TCP, specs)
}
