/*
 * udp.d: the argument types of the udp provider.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library net.d
#pragma D depends_on library inet.d
#pragma D depends_on library ip.d
#pragma D depends_on provider udp

/* A UDP header, decoded. */
typedef struct udpinfo {
	uint16_t udp_sport;		/* source port */
	uint16_t udp_dport;		/* destination port */
	uint16_t udp_length;		/* length of header and data */
	uint16_t udp_checksum;		/* checksum */
	struct udphdr *udp_hdr;		/* the header itself */
} udpinfo_t;

/* A UDP socket. */
typedef struct udpsinfo {
	uintptr_t udps_addr;		/* its udp_sock */
	uint16_t udps_lport;		/* local port */
	uint16_t udps_rport;		/* remote port */
	string udps_laddr;		/* local address */
	string udps_raddr;		/* remote address */
} udpsinfo_t;

translator udpinfo_t < struct udphdr *U > {
	udp_sport = ntohs(U->source);
	udp_dport = ntohs(U->dest);
	udp_length = ntohs(U->len);
	udp_checksum = ntohs(U->check);
	udp_hdr = U;
};

/*
 * Ports and addresses come from the packet's UDP header (arg4) and IP
 * header (arg2): for "send" the local end is the source, otherwise the
 * destination.
 */
translator udpsinfo_t < struct udp_sock *S > {
	udps_addr = (uintptr_t)S;
	udps_lport = arg4 == NULL ? 0 : probename == "send" ?
	    ntohs(((struct udphdr *)arg4)->source) :
	    ntohs(((struct udphdr *)arg4)->dest);
	udps_rport = arg4 == NULL ? 0 : probename == "send" ?
	    ntohs(((struct udphdr *)arg4)->dest) :
	    ntohs(((struct udphdr *)arg4)->source);
	udps_laddr = __dtrace_ip_addr[(void *)arg2, probename == "send", "<unknown>"];
	udps_raddr = __dtrace_ip_addr[(void *)arg2, probename != "send", "<unknown>"];
};
