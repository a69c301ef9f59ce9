/*
 * unistd.d: the fault codes that the ERROR probe reports in arg4.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* constants: unistd.d 1 */
