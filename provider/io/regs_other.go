//go:build !amd64 && !arm64

package io

// firstArgReg: no register layout is known here; the first argument reads
// as whatever is at the start of the registers.
const firstArgReg = 0
