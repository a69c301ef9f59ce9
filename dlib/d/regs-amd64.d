/*
 * regs.d: indexes into uregs[] on x86_64. uregs[] reads the user
 * registers saved at the last entry into the kernel, in the order of the
 * kernel's struct pt_regs; the segment registers and the trap number
 * follow.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* The 64-bit registers, in pt_regs order. */
/* constants: regs-amd64.d 1 */

/* The 32-bit names of the same registers. */
/* constants: regs-amd64.d 2 */

/* Names every architecture has: program counter, frame and stack pointers. */
/* constants: regs-amd64.d 3 */
