/*
 * ip.d: the argument types of the ip provider and the translators that
 * make them from the kernel's packets, sockets and devices.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library net.d
#pragma D depends_on library inet.d
#pragma D depends_on library procfs.d
#pragma D depends_on provider ip

/* Protocol numbers (ipv4_protocol, ipv6_nexthdr). */
/* constants: ip.d 1 */

inline int TCP_MIN_HEADER_LENGTH = 20;

/* On Linux a network stack is a network namespace: its address. */
typedef uint64_t netstackid_t;
typedef __be32 ipaddr_t;
typedef struct in6_addr in6_addr_t;

/* A packet; pkt_addr is its sk_buff. */
typedef struct pktinfo {
	uintptr_t pkt_addr;
} pktinfo_t;

/* A connection; cs_addr is its sock. */
typedef struct csinfo {
	uintptr_t cs_addr;
	uint64_t cs_cid;
} csinfo_t;

/* What IPv4 and IPv6 headers have in common. */
typedef struct ipinfo {
	uint8_t ip_ver;			/* 4 or 6 */
	uint32_t ip_plength;		/* payload length */
	string ip_saddr;		/* source address */
	string ip_daddr;		/* destination address */
} ipinfo_t;

/* A network interface. */
typedef struct ifinfo {
	string if_name;			/* its name */
	int8_t if_local;		/* 1 for local delivery (no device) */
	netstackid_t if_ipstack;	/* its network namespace */
	uintptr_t if_addr;		/* its net_device */
} ifinfo_t;

/* An IPv4 header, decoded (all 0 for another kind of packet). */
typedef struct ipv4info {
	uint8_t ipv4_ver;		/* 4 */
	uint8_t ipv4_ihl;		/* header length in bytes */
	uint8_t ipv4_tos;		/* type of service */
	uint16_t ipv4_length;		/* total length */
	uint16_t ipv4_ident;		/* identification */
	uint8_t ipv4_flags;		/* flags */
	uint16_t ipv4_offset;		/* fragment offset */
	uint8_t ipv4_ttl;		/* time to live */
	uint8_t ipv4_protocol;		/* next protocol */
	string ipv4_protostr;		/* next protocol, by name */
	uint16_t ipv4_checksum;		/* header checksum */
	ipaddr_t ipv4_src;		/* source address */
	ipaddr_t ipv4_dst;		/* destination address */
	string ipv4_saddr;		/* source address as text */
	string ipv4_daddr;		/* destination address as text */
	struct iphdr *ipv4_hdr;		/* the header itself */
} ipv4info_t;

/* An IPv6 header, decoded (all 0 for another kind of packet). */
typedef struct ipv6info {
	uint8_t ipv6_ver;		/* 6 */
	uint8_t ipv6_tclass;		/* traffic class */
	uint32_t ipv6_flow;		/* flow label */
	uint16_t ipv6_plen;		/* payload length */
	uint8_t ipv6_nexthdr;		/* next header */
	string ipv6_nextstr;		/* next header, by name */
	uint8_t ipv6_hlim;		/* hop limit */
	in6_addr_t *ipv6_src;		/* source address */
	in6_addr_t *ipv6_dst;		/* destination address */
	string ipv6_saddr;		/* source address as text */
	string ipv6_daddr;		/* destination address as text */
	struct ipv6hdr *ipv6_hdr;	/* the header itself */
} ipv6info_t;

/*
 * An IPv4 or IPv6 header: the version in its first nibble tells which.
 * A type of its own selects the translator.
 */
typedef uintptr_t void_ip_t;

/*
 * What the tcp provider passes for the IP header: when it is NULL (a
 * segment being sent has no IP header yet) the translator rebuilds what
 * it can from the socket in arg3, using the direction in arg7.
 */
typedef void *__dtrace_tcp_void_ip_t;

translator pktinfo_t < struct sk_buff *s > {
	pkt_addr = (uintptr_t)s;
};

translator csinfo_t < struct sock *s > {
	cs_addr = (uintptr_t)s;
};

translator ipinfo_t < struct iphdr *I > {
	ip_ver = 4;
	ip_plength = I != NULL ? ntohs(I->tot_len) - (I->ihl << 2) : 0;
	ip_saddr = I != NULL ? inet_ntoa(&I->saddr) : "<unknown>";
	ip_daddr = I != NULL ? inet_ntoa(&I->daddr) : "<unknown>";
};

translator ipinfo_t < struct ipv6hdr *I > {
	ip_ver = 6;
	ip_plength = I != NULL ? ntohs(I->payload_len) : 0;
	ip_saddr = I != NULL ? inet_ntoa6(&I->saddr) : "<unknown>";
	ip_daddr = I != NULL ? inet_ntoa6(&I->daddr) : "<unknown>";
};

translator ipinfo_t < void_ip_t *I > {
	ip_ver = I != NULL ? *(uint8_t *)I >> 4 : 0;
	ip_plength = I == NULL ? 0 :
	    *(uint8_t *)I >> 4 == 4 ?
	    ntohs(((struct iphdr *)I)->tot_len) - ((*(uint8_t *)I & 0xf) << 2) :
	    *(uint8_t *)I >> 4 == 6 ? ntohs(((struct ipv6hdr *)I)->payload_len) : 0;
	ip_saddr = __dtrace_ip_addr[I, 1, "<unknown>"];
	ip_daddr = __dtrace_ip_addr[I, 0, "<unknown>"];
};

/*
 * Without an IP header, a socket knows its local and remote addresses,
 * not source and destination: a packet coming in (arg7 is
 * NET_PROBE_INBOUND) goes from the remote address to the local one.
 * The payload length then comes from the sk_buff's TCP control block.
 */
translator ipinfo_t < __dtrace_tcp_void_ip_t *I > {
	ip_ver = I != NULL ? *(uint8_t *)I >> 4 :
	    arg3 == NULL ? 0 :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET ? 4 :
	    ((struct sock *)arg3)->__sk_common.skc_family == AF_INET6 ? 6 : 0;
	ip_plength = I != NULL && *(uint8_t *)I >> 4 == 4 ?
	    ntohs(((struct iphdr *)I)->tot_len) - ((*(uint8_t *)I & 0xf) << 2) :
	    I != NULL && *(uint8_t *)I >> 4 == 6 ?
	    ntohs(((struct ipv6hdr *)I)->payload_len) :
	    arg0 != NULL ?
	    ((struct tcp_skb_cb *)&((struct sk_buff *)arg0)->cb[0])->end_seq -
	    ((struct tcp_skb_cb *)&((struct sk_buff *)arg0)->cb[0])->seq : 0;
	ip_saddr = __dtrace_ip_addr[I, 1, __dtrace_sock_addr[(struct sock *)arg3,
	    arg7 != NET_PROBE_INBOUND, "<unknown>"]];
	ip_daddr = __dtrace_ip_addr[I, 0, __dtrace_sock_addr[(struct sock *)arg3,
	    arg7 == NET_PROBE_INBOUND, "<unknown>"]];
};

translator ifinfo_t < struct net_device *N > {
	if_name = N != NULL ? stringof(N->name) : "<unknown>";
	if_ipstack = N != NULL ? (uint64_t)N->nd_net.net : 0;
	if_local = N == NULL;
	if_addr = (uintptr_t)N;
};

/* The name of a protocol number, for ipv4_protostr and ipv6_nextstr. */
inline string __dtrace_ipproto_name[uint8_t p] =
    p == IPPROTO_TCP ? "TCP" :
    p == IPPROTO_UDP ? "UDP" :
    p == IPPROTO_IP ? "IP" :
    p == IPPROTO_ICMP ? "ICMP" :
    p == IPPROTO_IGMP ? "IGMP" :
    p == IPPROTO_EGP ? "EGP" :
    p == IPPROTO_IPV6 ? "IPv6" :
    p == IPPROTO_ROUTING ? "ROUTE" :
    p == IPPROTO_ESP ? "ESP" :
    p == IPPROTO_AH ? "AH" :
    p == IPPROTO_ICMPV6 ? "ICMPv6" :
    p == IPPROTO_OSPF ? "OSPF" :
    p == IPPROTO_SCTP ? "SCTP" :
    p == IPPROTO_RAW ? "RAW" :
    lltostr((uint64_t)p);

translator ipv4info_t < struct iphdr *I > {
	ipv4_ver = I != NULL ? 4 : 0;
	ipv4_ihl = I != NULL ? (*(uint8_t *)I & 0xf) << 2 : 0;
	ipv4_tos = I != NULL ? I->tos : 0;
	ipv4_length = I != NULL ? ntohs(I->tot_len) : 0;
	ipv4_ident = I != NULL ? ntohs(I->id) : 0;
	ipv4_flags = I != NULL ? ntohs(I->frag_off) >> 12 : 0;
	ipv4_offset = I != NULL ? ntohs(I->frag_off) & 0x0fff : 0;
	ipv4_ttl = I != NULL ? I->ttl : 0;
	ipv4_protocol = I != NULL ? I->protocol : 0;
	ipv4_protostr = I != NULL ? __dtrace_ipproto_name[I->protocol] : "<null>";
	ipv4_checksum = I != NULL ? ntohs(I->check) : 0;
	ipv4_src = I != NULL ? I->saddr : 0;
	ipv4_dst = I != NULL ? I->daddr : 0;
	ipv4_saddr = I != NULL ? inet_ntoa(&I->saddr) : "<null>";
	ipv4_daddr = I != NULL ? inet_ntoa(&I->daddr) : "<null>";
	ipv4_hdr = I;
};

translator ipv6info_t < struct ipv6hdr *I > {
	ipv6_ver = I != NULL ? *(uint8_t *)I >> 4 : 0;
	ipv6_tclass = I != NULL ? (ntohl(*(uint32_t *)I) & 0x0fffffff) >> 20 : 0;
	ipv6_flow = I != NULL ? ntohl(*(uint32_t *)I) & 0x000fffff : 0;
	ipv6_plen = I != NULL ? ntohs(I->payload_len) : 0;
	ipv6_nexthdr = I != NULL ? I->nexthdr : 0;
	ipv6_nextstr = I != NULL ? __dtrace_ipproto_name[I->nexthdr] : "<null>";
	ipv6_hlim = I != NULL ? I->hop_limit : 0;
	ipv6_src = I != NULL ? &I->saddr : NULL;
	ipv6_dst = I != NULL ? &I->daddr : NULL;
	ipv6_saddr = I != NULL ? inet_ntoa6(&I->saddr) : "<null>";
	ipv6_daddr = I != NULL ? inet_ntoa6(&I->daddr) : "<null>";
	ipv6_hdr = I;
};
