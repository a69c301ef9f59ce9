/*
 * inet.d: the address strings of IP headers and of sockets, which the
 * translators of ip.d, tcp.d and udp.d share.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library net.d

/*
 * The source (src != 0) or destination address of the IPv4 or IPv6
 * header H, else other. (An inline's arguments are evaluated where its
 * value uses them, so other only where H is not such a header.)
 */
inline string __dtrace_ip_addr[void *H, int src, string other] =
    H != NULL && *(uint8_t *)H >> 4 == 4 ?
    inet_ntoa(src ? &((struct iphdr *)H)->saddr : &((struct iphdr *)H)->daddr) :
    H != NULL && *(uint8_t *)H >> 4 == 6 ?
    inet_ntoa6(src ? &((struct ipv6hdr *)H)->saddr : &((struct ipv6hdr *)H)->daddr) :
    other;

/*
 * The local (local != 0) or remote address of the IPv4 or IPv6 socket S,
 * else other.
 */
inline string __dtrace_sock_addr[struct sock *S, int local, string other] =
    S != NULL && S->__sk_common.skc_family == AF_INET ?
    inet_ntoa(local ? &S->__sk_common.skc_rcv_saddr : &S->__sk_common.skc_daddr) :
    S != NULL && S->__sk_common.skc_family == AF_INET6 ?
    inet_ntoa6(local ?
	&S->__sk_common.skc_v6_rcv_saddr : &S->__sk_common.skc_v6_daddr) :
    other;
