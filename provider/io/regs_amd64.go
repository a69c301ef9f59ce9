package io

// firstArgReg is the offset in struct pt_regs of the register that holds
// a function's first argument at a kprobe on its entry (x86-64: di).
const firstArgReg = 112
