/*
 * signal.d: the signal numbers of Linux on x86_64, as D constants, for
 * raise() and for the signal arguments of the proc provider.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* constants: signal.d 1 */

