package abi

// The user-stack unwinder (codegen/unwind.go, docs/STACKS.md): programs
// that take ustack() walk the stack by each object's call-frame
// information. The library fills three maps; the BPF side reads them and
// reports the objects it found no table for.
const (
	// MapUWFiles is the hash from a mapped file's identity (UWFileKey*:
	// the kernel's dev_t of its super block and its inode number) to its
	// table (UWFile* value). The vdso is the file (0, UWVdsoIno).
	MapUWFiles = "dt_uw_files"
	// MapUWTables is the array of maps that holds the tables: index
	// UWFileTable of a dt_uw_files value is an array of UWFileRows rows
	// (UWRow* layout), sorted by file offset.
	MapUWTables = "dt_uw_tables"
	// MapUWMiss is the hash, keyed as dt_uw_files, of the files a stack
	// walk met that have no entry there (UWMiss* value): the library
	// builds their tables and deletes the entries.
	MapUWMiss = "dt_uw_miss"
)

// MapUWVMAs is the per-CPU array of one UWVMAs* value: the mappings the
// walks on this CPU found lately with bpf_find_vma, which a walk may call
// only once where interrupts are off (a profile probe: the mmap lock's
// release waits for an irq_work).
const MapUWVMAs = "dt_uw_vmas"

// dt_uw_vmas value: a round-robin cache of UWVMAsN mappings.
const (
	UWVMAsNext  = 0 // u64 the next slot to fill
	UWVMAsFirst = 8 // the first UWVMA* slot
	UWVMAsN     = 16
	UWVMAsSize  = UWVMAsFirst + UWVMAsN*UWVMASize
	// A slot.
	UWVMATgid  = 0  // u64 the process
	UWVMAMM    = 8  // u64 its mm_struct (a new one after exec)
	UWVMAStart = 16 // u64 vm_start
	UWVMAEnd   = 24 // u64 vm_end
	UWVMABase  = 32 // u64 file offset - address
	UWVMADev   = 40 // u64 the file (dt_uw_files key)
	UWVMAIno   = 48 // u64
	UWVMAStamp = 56 // u64 bpf_ktime_get_ns() when it was found
	UWVMASize  = 64
	// UWVMATTL is how long a slot is trusted (ns): a mapping replaced
	// at the same address (dlclose, dlopen) is found again after it.
	UWVMATTL = 2_000_000_000
)

// dt_uw_files key and value.
const (
	UWFileKeyDev  = 0 // u64 dev_t (the kernel's encoding, major<<20|minor)
	UWFileKeyIno  = 8 // u64 inode number
	UWFileKeySize = 16
	// UWFileTable is the u32 index in dt_uw_tables; 0 means the file has
	// no table (no call-frame information): walk frame pointers there.
	UWFileTable = 0
	UWFileRows  = 4  // u32 number of rows
	UWFileUsed  = 8  // u64 bpf_ktime_get_ns() of the last walk through it
	UWFileSize  = 16 // value size
	// UWAnyDev files a table by inode number alone: a walk that finds
	// no (dev, ino) entry tries (UWAnyDev, ino).
	UWAnyDev = -1
	// UWVdsoIno is the inode number under which the vdso's table is filed
	// (with dev 0): the vdso has no file.
	UWVdsoIno = 1
)

// dt_uw_miss value: where the file was met, for the library to open it
// through /proc/TGID/map_files/START-END.
const (
	UWMissStart = 0  // u64 vm_start of the mapping
	UWMissEnd   = 8  // u64 vm_end
	UWMissBase  = 16 // u64 vm_pgoff*4096 - vm_start (file offset minus address)
	UWMissTgid  = 24 // u64 the process
	UWMissSize  = 32
)

// A row of a table (unwind.Table.Encode writes them).
const (
	UWRowPC     = 0  // u32 file offset of the first byte the row covers
	UWRowCFA    = 4  // u8 UWCFA* kind
	UWRowRegs   = 5  // u8 rbp's UWRBP* rule | rbx's << 4
	UWRowAux    = 6  // u16 the PLT expression's threshold; UWCFAReg's offsets
	UWRowCFAOff = 8  // i32
	UWRowRBPOff = 12 // i16 where rbp is saved, from the CFA
	UWRowRBXOff = 14 // i16 where rbx is saved
	UWRowSize   = 16
)

// CFA kinds of a row (unwind.CFAKind).
const (
	UWCFANone   = 0 // no rule: walk the frame pointer
	UWCFARSP    = 1 // CFA = rsp + off
	UWCFARBP    = 2 // CFA = rbp + off
	UWCFAPLT    = 3 // CFA = rsp + off + 8 if (rip & 15) >= aux
	UWCFASignal = 4 // a signal trampoline: registers in the ucontext at rsp
	UWCFAEnd    = 5 // the outermost frame
	UWCFARBX    = 6 // CFA = rbx + off
	// UWCFAReg: CFA = another register + off, where all registers are
	// known: aux & 0xff is its offset in pt_regs (the innermost frame),
	// aux >> 8 in the sigcontext (a frame a signal interrupted).
	UWCFAReg = 7
)

// Rules of rbp and rbx in a row (unwind.RBPKind).
const (
	UWRBPSame = 0 // unchanged
	UWRBPAt   = 1 // saved at CFA + off
	UWRBPLost = 2 // unknown
)

// Sizes of the unwinder's maps.
const (
	// UWFilesMax bounds the files with tables (and files known to have
	// none) at once.
	UWFilesMax = 8192
	// UWTablesMax bounds the tables at once (index 0 is never used).
	UWTablesMax = 4096
	// UWMissMax bounds the files waiting for a table.
	UWMissMax = 256
)

// x86-64 user register offsets the unwinder reads: in struct pt_regs
// (bpf_task_pt_regs) and in the ucontext a signal handler returns
// through (arch/x86 rt_sigframe: the ucontext's uc_mcontext, a struct
// sigcontext, starts 40 bytes in).
const (
	PtRegsBP = 32
	PtRegsBX = 40
	PtRegsIP = 128
	PtRegsCS = 136
	PtRegsSP = 152

	UContextMcontext = 40 // struct sigcontext
	UContextBP       = 40 + 80
	UContextBX       = 40 + 88
	UContextSP       = 40 + 120
	UContextIP       = 40 + 128
)
