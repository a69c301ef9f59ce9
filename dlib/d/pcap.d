/*
 * pcap.d: the link types pcap() accepts, named after the DLPI types and
 * valued as pcap's DLT_* link types (any other DLT_* value works too).
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on provider ip

inline int PCAP_NULL = 0;	/* BSD loopback */
inline int PCAP_ETHER = 1;	/* Ethernet */
inline int PCAP_PPP = 9;	/* PPP */
inline int PCAP_IP = 12;	/* raw IPv4 or IPv6 */
inline int PCAP_WIFI = 105;	/* IEEE 802.11 */
inline int PCAP_IPOIB = 242;	/* IP over InfiniBand */
