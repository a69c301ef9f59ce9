package io

// firstArgReg is the offset in struct user_pt_regs of the register that
// holds a function's first argument at a kprobe on its entry (arm64: x0).
const firstArgReg = 0
