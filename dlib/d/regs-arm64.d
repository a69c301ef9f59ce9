/*
 * regs.d: indexes into uregs[] on arm64 (aarch64). uregs[] reads the
 * user registers saved at the last entry into the kernel, in the order
 * of the kernel's struct pt_regs: x0 to x30, sp, pc, pstate.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

/* constants: regs-arm64.d 1 */

/* The frame pointer and the link register by their roles. */
inline int R_FP = 29;
inline int R_LR = 30;
