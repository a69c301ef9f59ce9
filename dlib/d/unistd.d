/*
 * unistd.d: the fault codes that the ERROR probe reports in arg4.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

inline int DTRACEFLT_UNKNOWN = 0;	/* a fault of no known kind */
inline int DTRACEFLT_BADADDR = 1;	/* a load from an invalid address */
inline int DTRACEFLT_BADALIGN = 2;	/* a misaligned access */
inline int DTRACEFLT_ILLOP = 3;		/* an illegal operation */
inline int DTRACEFLT_DIVZERO = 4;	/* a division by zero */
inline int DTRACEFLT_NOSCRATCH = 5;	/* scratch memory exhausted */
inline int DTRACEFLT_KPRIV = 6;		/* a kernel access without privilege */
inline int DTRACEFLT_UPRIV = 7;		/* a user access without privilege */
inline int DTRACEFLT_TUPOFLOW = 8;	/* the tuple stack overflowed */
inline int DTRACEFLT_BADSTACK = 9;	/* a bad stack */
