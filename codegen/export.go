package codegen

// FaultRecordSize is the size of a fault record in the principal buffer;
// the library checks that bufsize can hold one when ERROR is enabled.
const FaultRecordSize = faultRecSize

// msErrno is the mstate offset of errno, which syscall return prologues
// fill (docs/ARCHITECTURE.md).
const msErrno = 120
