/*
 * tcp.d: the argument types of the tcp provider: TCP headers, TCP
 * connection state and state changes.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library net.d
#pragma D depends_on library inet.d
#pragma D depends_on library ip.d
#pragma D depends_on provider ip
#pragma D depends_on provider tcp

/* Header flags (tcp_flags). */
/* constants: tcp.d 1 */

/* Connection states (tcps_state), numbered as Solaris numbers them. */
/* constants: tcp.d 2 */

/* The name of a connection state. */
inline string tcp_state_string[int state] =
    state == TCP_STATE_CLOSED ? "state-closed" :
    state == TCP_STATE_IDLE ? "state-idle" :
    state == TCP_STATE_LISTEN ? "state-listen" :
    state == TCP_STATE_SYN_SENT ? "state-syn-sent" :
    state == TCP_STATE_SYN_RECEIVED ? "state-syn-received" :
    state == TCP_STATE_ESTABLISHED ? "state-established" :
    state == TCP_STATE_CLOSE_WAIT ? "state-close-wait" :
    state == TCP_STATE_FIN_WAIT_1 ? "state-fin-wait-1" :
    state == TCP_STATE_CLOSING ? "state-closing" :
    state == TCP_STATE_LAST_ACK ? "state-last-ack" :
    state == TCP_STATE_FIN_WAIT_2 ? "state-fin-wait-2" :
    state == TCP_STATE_TIME_WAIT ? "state-time-wait" :
    "<unknown>";

/* A TCP header, decoded. */
typedef struct tcpinfo {
	uint16_t tcp_sport;		/* source port */
	uint16_t tcp_dport;		/* destination port */
	uint32_t tcp_seq;		/* sequence number */
	uint32_t tcp_ack;		/* acknowledgement number */
	uint8_t tcp_offset;		/* data offset in bytes */
	uint8_t tcp_flags;		/* TH_* flags */
	uint16_t tcp_window;		/* window */
	uint16_t tcp_checksum;		/* checksum */
	uint16_t tcp_urgent;		/* urgent pointer */
	uintptr_t tcp_hdr;		/* the header itself */
} tcpinfo_t;

/* A TCP connection. */
typedef struct tcpsinfo {
	uintptr_t tcps_addr;		/* its tcp_sock */
	int tcps_local;			/* both ends on this host */
	uint16_t tcps_lport;		/* local port */
	uint16_t tcps_rport;		/* remote port */
	string tcps_laddr;		/* local address */
	string tcps_raddr;		/* remote address */
	int tcps_state;			/* TCP_STATE_* */
	uint32_t tcps_iss;		/* initial sequence number sent */
	uint32_t tcps_suna;		/* oldest unacknowledged sequence number */
	uint32_t tcps_snxt;		/* next sequence number to send */
	uint32_t tcps_rnxt;		/* next sequence number expected */
	uint32_t tcps_swnd;		/* send window */
	int32_t tcps_snd_ws;		/* send window scale */
	uint32_t tcps_rwnd;		/* receive window */
	int32_t tcps_rcv_ws;		/* receive window scale */
	uint32_t tcps_cwnd;		/* congestion window */
	uint32_t tcps_cwnd_ssthresh;	/* slow-start threshold */
	uint32_t tcps_sack_snxt;	/* next sequence number to retransmit (SACK) */
	uint32_t tcps_rto;		/* retransmission timeout */
	uint32_t tcps_mss;		/* maximum segment size */
	int tcps_retransmit;		/* this send is a retransmission */
	uint32_t tcps_rtt;		/* smoothed round-trip time, ms */
	uint32_t tcps_rtt_sd;		/* its deviation */
	uint32_t tcps_irs;		/* initial sequence number received */
} tcpsinfo_t;

/* The state a connection left (state-change probes). */
typedef struct tcplsinfo {
	int tcps_state;
} tcplsinfo_t;

translator tcpinfo_t < struct tcphdr *T > {
	tcp_sport = T != NULL ? ntohs(T->source) : 0;
	tcp_dport = T != NULL ? ntohs(T->dest) : 0;
	tcp_seq = T != NULL ? ntohl(T->seq) : 0;
	tcp_ack = T != NULL ? ntohl(T->ack_seq) : 0;
	tcp_offset = T != NULL ? (*((uint8_t *)T + 12) & 0xf0) >> 2 : 0;
	tcp_flags = T != NULL ? *((uint8_t *)T + 13) : 0;
	tcp_window = T != NULL ? ntohs(T->window) : 0;
	tcp_checksum = T != NULL ? ntohs(T->check) : 0;
	tcp_urgent = T != NULL ? ntohs(T->urg_ptr) : 0;
	tcp_hdr = (uintptr_t)T;
};

/*
 * tcps_state comes from arg6, not from the socket: the kernel changes
 * sk_state at other moments than the probes fire, and a TIME_WAIT
 * connection lives in a socket of its own. Ports and addresses a socket
 * does not have yet come from the TCP header in arg4 and the IP header in
 * arg2, with the direction in arg7.
 */
translator tcpsinfo_t < struct tcp_sock *T > {
	tcps_addr = (uintptr_t)T;
	tcps_local = T == NULL ? 0 :
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET ?
	    ((struct sock *)T)->__sk_common.skc_rcv_saddr ==
	    ((struct sock *)T)->__sk_common.skc_daddr :
	    ((struct sock *)T)->__sk_common.skc_family == AF_INET6 ?
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[0] ==
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[0] &&
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[1] ==
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[1] &&
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[2] ==
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[2] &&
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_rcv_saddr)[3] ==
	    ((uint32_t *)&((struct sock *)T)->__sk_common.skc_v6_daddr)[3] : 0;
	tcps_lport = T != NULL && ((struct inet_sock *)T)->inet_sport != 0 ?
	    ntohs(((struct inet_sock *)T)->inet_sport) :
	    T != NULL ? ((struct sock *)T)->__sk_common.skc_num :
	    arg4 != NULL ? ntohs(arg7 == NET_PROBE_INBOUND ?
		((struct tcphdr *)arg4)->dest : ((struct tcphdr *)arg4)->source) : 0;
	tcps_rport = T != NULL && ((struct sock *)T)->__sk_common.skc_dport != 0 ?
	    ntohs(((struct sock *)T)->__sk_common.skc_dport) :
	    arg4 != NULL ? ntohs(arg7 == NET_PROBE_INBOUND ?
		((struct tcphdr *)arg4)->source : ((struct tcphdr *)arg4)->dest) : 0;
	tcps_laddr = __dtrace_sock_addr[(struct sock *)T, 1,
	    __dtrace_ip_addr[(void *)arg2, arg7 != NET_PROBE_INBOUND, "<unknown>"]];
	tcps_raddr = __dtrace_sock_addr[(struct sock *)T, 0,
	    __dtrace_ip_addr[(void *)arg2, arg7 == NET_PROBE_INBOUND, "<unknown>"]];
	tcps_state = arg6;
	tcps_iss = T != NULL ? T->snd_una - (uint32_t)T->bytes_acked : 0;
	tcps_suna = T != NULL ? T->snd_una : 0;
	tcps_snxt = T != NULL ? T->snd_nxt : 0;
	tcps_rnxt = T != NULL ? T->rcv_nxt : 0;
	tcps_swnd = T != NULL ? T->snd_wnd : 0;
	tcps_snd_ws = T != NULL ? T->rx_opt.snd_wscale : 0;
	tcps_rwnd = T != NULL ? T->rcv_wnd : 0;
	tcps_rcv_ws = T != NULL ? T->rx_opt.rcv_wscale : 0;
	tcps_cwnd = T != NULL ? T->snd_cwnd : 0;
	tcps_cwnd_ssthresh = T != NULL ? T->snd_ssthresh : 0;
	tcps_sack_snxt = T == NULL ? 0 :
	    T->sacked_out == 0 ? T->snd_una :
	    T->highest_sack == NULL ? T->snd_nxt :
	    ((struct tcp_skb_cb *)&T->highest_sack->cb[0])->seq;
	tcps_rto = T != NULL ? T->inet_conn.icsk_rto : 0;
	tcps_mss = T != NULL ? T->mss_cache : 0;
	tcps_retransmit = T != NULL && arg0 != NULL ?
	    ((struct tcp_skb_cb *)&((struct sk_buff *)arg0)->cb[0])->end_seq <
	    T->snd_nxt - 1 : 0;
	tcps_rtt = T != NULL ? (T->srtt_us >> 3) / 1000 : 0;
	tcps_rtt_sd = T != NULL ? (T->mdev_us >> 2) / 1000 : 0;
	tcps_irs = T != NULL && T->bytes_received > 0 ?
	    T->rcv_nxt - (uint32_t)T->bytes_received : 0;
};

translator tcplsinfo_t < int I > {
	tcps_state = I;
};
