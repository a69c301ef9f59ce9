/*
 * net.d: what every network provider shares: address families for
 * inet_ntop(), link types for link_ntop(), the connection description
 * of application protocols, and the direction of a packet.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* Address families (inet_ntop). */
inline int AF_INET = 2;
inline int AF_INET6 = 10;

/* Hardware types (link_ntop). */
inline int ARPHRD_ETHER = 1;
inline int ARPHRD_INFINIBAND = 32;

/* A connection, as application protocol providers give it first. */
typedef struct conninfo {
	string ci_local;	/* local address */
	string ci_remote;	/* remote address */
	string ci_protocol;	/* "ipv4", "ipv6", ... */
} conninfo_t;

/* The direction of a packet, as the network providers pass it in arg7. */
inline int NET_PROBE_OUTBOUND = 0x00;
inline int NET_PROBE_INBOUND = 0x01;
