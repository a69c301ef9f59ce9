/*
 * kvars.d: the C types of kernel variables that D programs read with a
 * backquote (`max_pfn, `nr_cpu_ids, stringof(`linux_banner)).
 *
 * The kernel's BTF types only its per-CPU variables, so the type of any
 * other kernel variable comes from an extern declaration: these, or the
 * program's own (extern int foo; then `foo). A declaration here types
 * the kernel symbol of its name and declares no D identifier; one whose
 * symbol the running kernel lacks is harmless. The types are those of
 * the kernel's sources (include/linux) for Linux 6.1 to 6.18.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux

/* init/version.c */
extern const char linux_banner[];
extern const char linux_proc_banner[];

/* include/linux/jiffies.h: jiffies is the low word of jiffies_64. */
extern volatile unsigned long jiffies;
extern uint64_t jiffies_64;
extern unsigned long loops_per_jiffy;

/* include/linux/cpumask.h, include/linux/nodemask.h */
extern unsigned int nr_cpu_ids;
extern unsigned int nr_node_ids;

/* memory: include/linux/memblock.h, include/linux/mm.h */
extern unsigned long max_pfn;
extern unsigned long min_low_pfn;
extern unsigned long max_low_pfn;
extern unsigned long totalreserve_pages;
extern void *high_memory;

/* processes: kernel/fork.c, kernel/pid.c, kernel/sched/loadavg.c */
extern int nr_threads;
extern int max_threads;
extern unsigned long total_forks;
extern int pid_max;
extern unsigned long avenrun[3];
extern struct pid *cad_pid;

/* kernel/panic.c, init/main.c, lib/vsprintf.c, mm/memory.c */
extern int panic_timeout;
extern int oops_in_progress;
extern char *saved_command_line;
extern int kptr_restrict;
extern int randomize_va_space;

/* x86: arch/x86/kernel/reboot.c, tsc.c, arch/x86/mm/kaslr.c */
extern int crashing_cpu;
extern unsigned int tsc_khz;
extern unsigned int cpu_khz;
extern unsigned long page_offset_base;
extern unsigned long vmalloc_base;
extern unsigned long vmemmap_base;
