/*
 * procfs.d: processes and threads as Solaris proc(4) describes them:
 * psinfo_t and lwpsinfo_t, translated from the kernel's task_struct, and
 * the curpsinfo and curlwpsinfo inlines that translate curthread.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library sched.d

typedef time64_t time_t;

typedef struct timestruc {
	time_t tv_sec;
	long tv_nsec;
} timestruc_t;

/*
 * A thread (a Solaris light-weight process). Members this Linux port
 * does not fill read as 0.
 */
typedef struct lwpsinfo {
	int pr_flag;			/* PR_STOPPED, PR_ISTOP, ... */
	int pr_lwpid;			/* thread id */
	uintptr_t pr_addr;		/* its task_struct */
	uintptr_t pr_wchan;		/* wait channel (not on Linux) */
	char pr_stype;			/* kind of synchronization object */
	char pr_state;			/* SSLEEP, SRUN, ... */
	char pr_sname;			/* pr_state as a letter: S, R, T, Z, W */
	char pr_nice;			/* nice value */
	short pr_syscall;		/* system call in progress */
	char pr_oldpri;			/* old-style priority */
	char pr_cpu;			/* recent CPU usage */
	int pr_pri;			/* priority */
	ushort_t pr_pctcpu;		/* recent CPU time, fixed-point percent */
	ushort_t pr_pad;
	timestruc_t pr_start;		/* when the thread started */
	timestruc_t pr_time;		/* CPU time used */
	char pr_clname[8];		/* scheduling class */
	char pr_name[16];		/* thread name */
	processorid_t pr_onpro;		/* CPU it last ran on */
	processorid_t pr_bindpro;	/* CPU it is bound to */
	psetid_t pr_bindpset;		/* processor set it is bound to */
	int pr_lgrp;			/* home locality group */
	int pr_filler[4];
} lwpsinfo_t;

typedef id_t taskid_t;
typedef id_t dprojid_t;
typedef id_t poolid_t;
typedef id_t zoneid_t;

/*
 * A process. Sizes, CPU and memory percentages and times are not filled
 * (translating them is an error), nor is pr_lwp: use curlwpsinfo.
 * pr_argv and pr_envp are the addresses of the argument and environment
 * vectors the process started with, in its initial stack (above argc, at
 * mm->start_stack). Only the current process's memory can be read, so
 * its pr_argc and pr_envp are found for it only (0 for other processes).
 */
typedef struct psinfo {
	int pr_flag;			/* process flags */
	int pr_nlwp;			/* threads (1: the task translated) */
	pid_t pr_pid;			/* process id */
	pid_t pr_ppid;			/* parent's process id */
	pid_t pr_pgid;			/* process group id */
	pid_t pr_sid;			/* session id */
	uid_t pr_uid;			/* real user id */
	uid_t pr_euid;			/* effective user id */
	uid_t pr_gid;			/* real group id */
	uid_t pr_egid;			/* effective group id */
	uintptr_t pr_addr;		/* its task_struct */
	size_t pr_size;			/* image size in KB */
	size_t pr_rssize;		/* resident set size in KB */
	size_t pr_pad1;
	struct tty_struct *pr_ttydev;	/* controlling terminal, or -1 */
	ushort_t pr_pctcpu;		/* recent CPU time, fixed-point percent */
	ushort_t pr_pctmem;		/* memory, fixed-point percent */
	timestruc_t pr_start;		/* when the process started */
	timestruc_t pr_time;		/* CPU time used */
	timestruc_t pr_ctime;		/* CPU time its children used */
	char pr_fname[16];		/* executable name */
	char pr_psargs[80];		/* the start of its arguments */
	int pr_wstat;			/* a zombie's wait status */
	int pr_argc;			/* argument count */
	uintptr_t pr_argv;		/* address of the argument vector */
	uintptr_t pr_envp;		/* address of the environment */
	char pr_dmodel;			/* PR_MODEL_ILP32 or PR_MODEL_LP64 */
	char pr_pad2[3];
	taskid_t pr_taskid;		/* Solaris task (0) */
	dprojid_t pr_projid;		/* Solaris project (0) */
	int pr_nzomb;			/* zombie threads (0) */
	poolid_t pr_poolid;		/* resource pool (0) */
	zoneid_t pr_zoneid;		/* zone (0) */
	id_t pr_contract;		/* process contract (0) */
	int pr_filler[1];
	lwpsinfo_t pr_lwp;		/* a representative thread */
} psinfo_t;

/* Data models (pr_dmodel). */
inline char PR_MODEL_ILP32 = 1;
inline char PR_MODEL_LP64 = 2;

/* Indexes of signal_struct.pids[]: the kernel's enum pid_type. */
/* constants: procfs.d 1 */

translator psinfo_t < struct task_struct *T > {
	pr_nlwp = 1;
	pr_pid = T->tgid;
	pr_ppid = T->real_parent->tgid;
	pr_pgid = T->signal->pids[PIDTYPE_PGID]->numbers[0].nr;
	pr_sid = T->signal->pids[PIDTYPE_SID]->numbers[0].nr;
	pr_uid = T->cred->uid.val;
	pr_euid = T->cred->euid.val;
	pr_gid = T->cred->gid.val;
	pr_egid = T->cred->egid.val;
	pr_addr = (uintptr_t)T;
	pr_ttydev = T->signal->tty != NULL ? T->signal->tty : (struct tty_struct *)-1;
	pr_fname = T->comm;
	/*
	 * Only the current process's memory can be read: its first argument
	 * (Linux keeps the arguments as strings one after another, with no
	 * vector to count). For any other task, and for kernel threads, the
	 * name it runs as.
	 */
	pr_psargs = T == curthread && T->mm != NULL ?
	    copyinstr(T->mm->arg_start, 80) : stringof(T->comm);
	pr_argc = T == curthread && T->mm != NULL ?
	    *(long *)copyin(T->mm->start_stack, sizeof(long)) : 0;
	pr_argv = T->mm != NULL ? T->mm->start_stack + sizeof(long) : 0;
	pr_envp = T == curthread && T->mm != NULL ? T->mm->start_stack +
	    (*(long *)copyin(T->mm->start_stack, sizeof(long)) + 2) *
	    sizeof(long) : 0;
	pr_wstat = 0;
	pr_dmodel = PR_MODEL_LP64;
	pr_taskid = 0;
	pr_projid = 0;
	pr_nzomb = 0;
	pr_poolid = 0;
	pr_zoneid = 0;
	pr_contract = 0;
};

/* Thread flags (pr_flag). */
/* constants: procfs.d 2 */

/* Thread states (pr_state). */
/* constants: procfs.d 3 */

/*
 * The kernel's task states are bits of task_struct.__state:
 * 0x1 interruptible and 0x2 uninterruptible sleep, 0x4 stopped,
 * 0x8 traced, 0x10 dead, 0x20 zombie, 0x80 dying, 0x100 wake-kill,
 * 0x200 waking; 0 is running.
 */
translator lwpsinfo_t < struct task_struct *T > {
	pr_flag = T->__state & 0x4 ? PR_STOPPED : 0;
	pr_lwpid = T->pid;
	pr_addr = (uintptr_t)T;
	pr_wchan = NULL;
	pr_stype = 0;
	pr_state = T->__state & 0x3 ? SSLEEP :
	    T->__state & 0xc ? SSTOP :
	    T->__state & 0xb0 ? SZOMB :
	    T->__state & 0x300 ? SWAIT : SRUN;
	pr_sname = T->__state & 0x3 ? 'S' :
	    T->__state & 0xc ? 'T' :
	    T->__state & 0xb0 ? 'Z' :
	    T->__state & 0x300 ? 'W' : 'R';
	pr_pri = T->prio;
	pr_name = T->comm;
	pr_onpro = T->thread_info.cpu;
};

inline psinfo_t *curpsinfo = xlate <psinfo_t *> (curthread);
#pragma D attributes Stable/Stable/Common curpsinfo

inline lwpsinfo_t *curlwpsinfo = xlate <lwpsinfo_t *> (curthread);
#pragma D attributes Stable/Stable/Common curlwpsinfo

/* The working directory and the root directory of the current process. */
inline string cwd = d_path(&curthread->fs->pwd);
#pragma D attributes Stable/Stable/Common cwd

inline string root = d_path(&curthread->fs->root);
#pragma D attributes Stable/Stable/Common root

/* How a child changed state (the proc provider's signal and exit codes). */
/* constants: procfs.d 4 */
