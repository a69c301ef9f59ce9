/*
 * errno.d: the error numbers of Linux, as D constants, for comparisons
 * with the errno builtin and with system call return values.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* constants: errno.d 1 */
