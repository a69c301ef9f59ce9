// Package usdt is the provider of user-level statically defined tracing
// probes: the probes sys/sdt.h (SystemTap's SDT, which PostgreSQL,
// libc and many others use) records in .note.stapsdt ELF notes.
//
// A probe is named PROVIDER:MODULE:FUNCTION:NAME: MODULE is the base name
// of the object, FUNCTION the function around the probe site, and NAME the
// note's name with "__" shown as "-" (query__start is query-start). The
// provider field takes two forms:
//
//   - PROVIDERpid (postgresql1234, or myprov$target): the probes of that
//     process, made on demand from the notes of every object it maps, and
//     attached with the process as uprobe filter, as in DTrace.
//   - PROVIDER without a process id, or any glob (postgresql*, *): the
//     probes of every object with notes that some running process maps,
//     or that the provider was given by path. They are attached to the
//     file, not to a process, so they fire in every process running that
//     code, including those started after tracing began (a forking
//     server's children, a command run again). Their provider name has no
//     pid; pid and execname tell the processes apart.
//
// Arguments come from the note's specifications ("-4@%eax", "8@-16(%rbp)",
// "4@$5", "4@counter(%rip)"): the prologue loads registers from pt_regs
// and reads memory operands with bpf_probe_read_user, then narrows and
// sign- or zero-extends them to 64 bits. When one probe has several sites
// (a macro expanded in several places, or inlined) each site has its own
// specifications; the uprobe of each site carries its index as the BPF
// attach cookie and the prologue dispatches on it.
//
// Semaphores (probes guarded by PROVIDER_NAME_ENABLED()) are counted by
// the kernel: each uprobe is opened with the semaphore's file offset as
// its ref_ctr_offset, so the kernel increments the semaphore in every
// process it instruments (including processes that start later) and
// decrements it when the uprobe is closed, even when dtrace is killed:
// the kernel closes a SIGKILLed process's uprobe links and perf events,
// and each lowers the semaphore it raised (internal/hardstop tests it).
// dtrace itself never writes into a traced process. The kernel writes
// only the two bytes at ref_ctr_offset, in a private writable mapping of
// the very file the note came from; and a note whose semaphore is not
// within the file bytes of a writable segment of its own object (code,
// .bss, an address no segment has) is refused with its site
// (SemaphoreOffset), so a crafted note cannot aim the kernel's write
// anywhere else.
package usdt
