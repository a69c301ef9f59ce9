/*
 * regs.d: indexes into uregs[] on arm64 (aarch64). uregs[] reads the
 * user registers saved at the last entry into the kernel, in the order
 * of the kernel's struct pt_regs: x0 to x30, sp, pc, pstate.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

inline int R_X0 = 0;
inline int R_X1 = 1;
inline int R_X2 = 2;
inline int R_X3 = 3;
inline int R_X4 = 4;
inline int R_X5 = 5;
inline int R_X6 = 6;
inline int R_X7 = 7;
inline int R_X8 = 8;
inline int R_X9 = 9;
inline int R_X10 = 10;
inline int R_X11 = 11;
inline int R_X12 = 12;
inline int R_X13 = 13;
inline int R_X14 = 14;
inline int R_X15 = 15;
inline int R_X16 = 16;
inline int R_X17 = 17;
inline int R_X18 = 18;
inline int R_X19 = 19;
inline int R_X20 = 20;
inline int R_X21 = 21;
inline int R_X22 = 22;
inline int R_X23 = 23;
inline int R_X24 = 24;
inline int R_X25 = 25;
inline int R_X26 = 26;
inline int R_X27 = 27;
inline int R_X28 = 28;
inline int R_X29 = 29;
inline int R_X30 = 30;
inline int R_SP = 31;
inline int R_PC = 32;
inline int R_PSTATE = 33;

/* The frame pointer and the link register by their roles. */
inline int R_FP = 29;
inline int R_LR = 30;
