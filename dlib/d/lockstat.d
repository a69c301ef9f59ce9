/*
 * lockstat.d: the kinds of reader/writer lock the lockstat provider
 * reports.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on provider lockstat

inline int RW_WRITER = 0x00;
inline int RW_READER = 0x01;
