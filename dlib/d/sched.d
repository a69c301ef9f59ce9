/*
 * sched.d: the CPU a probe fires on, as the curcpu builtin and the
 * sched provider describe it.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux

typedef id_t processorid_t;	/* a CPU number */
typedef id_t psetid_t;		/* a processor set (Linux has one: 0) */
typedef id_t chipid_t;		/* a physical package */
typedef id_t lgrp_id_t;		/* a locality group (NUMA node) */

/* What curcpu points to. */
typedef struct cpuinfo {
	processorid_t cpu_id;
	psetid_t cpu_pset;
	chipid_t cpu_chip;
	lgrp_id_t cpu_lgrp;
} cpuinfo_t;

typedef cpuinfo_t *cpuinfo_t_p;

inline processorid_t cpu = curcpu->cpu_id;
#pragma D attributes Stable/Stable/Common cpu
inline psetid_t pset = curcpu->cpu_pset;
#pragma D attributes Stable/Stable/Common pset
inline chipid_t chip = curcpu->cpu_chip;
#pragma D attributes Stable/Stable/Common chip
inline lgrp_id_t lgrp = curcpu->cpu_lgrp;
#pragma D attributes Stable/Stable/Common lgrp

/*
 * The CPU a thread is on or queued to, for the sched provider's enqueue
 * and dequeue. Linux has one processor set; the chip and locality group
 * of another CPU than the current one are not known here and read 0.
 */
translator cpuinfo_t < struct task_struct *T > {
	cpu_id = T->thread_info.cpu;
	cpu_pset = 0;
	cpu_chip = 0;
	cpu_lgrp = 0;
};
