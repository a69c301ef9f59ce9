/*
 * pcap.d: the link types pcap() accepts, named after the DLPI types and
 * valued as pcap's DLT_* link types (any other DLT_* value works too).
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on provider ip

/* constants: pcap.d 1 */
