/*
 * container.d: the container a process runs in (beyond DTrace on Linux),
 * for the zonename and cgroupid builtins and cgrouppath(): illumos's zone
 * is Linux's cgroup, which container runtimes name after the container
 * (docker-<id>.scope, cri-containerd-<id>.scope, libpod-<id>.scope) and
 * systemd after the unit.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux

/*
 * The cgroup a task's container is: its cgroup in the cgroup v2
 * (default) hierarchy; when that is the root, as for every task of a
 * host whose controllers are mounted as cgroup v1, its cgroup in the
 * memory controller's v1 hierarchy (where v1 runtimes put containers).
 * dtrace writes the kernel's values of these two constants in place of
 * the line below, from its BTF (enum cgroup_subsys_id); memory_cgrp_v1 is
 * 0 on a kernel without the memory controller.
 */
/* kernel: memory_cgrp_id memory_cgrp_v1 */

typedef struct cgroupinfo {
	string cg_name;		/* the cgroup's name, "global" for a root */
	uint64_t cg_id;		/* the cgroup's id (its directory's inode) */
	string cg_path;		/* its path from the hierarchy's root */
} cgroupinfo_t;

/*
 * cg_path is written out level by level for the first 8 levels below
 * the root (kubernetes puts containers at the fourth).
 */
translator cgroupinfo_t < struct task_struct *T > {
	cg_name = ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level == 0 ? "global" : stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->kn->name);
	cg_id = ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->kn->id;
	cg_path = ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level == 0 ? "/" : strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[1]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 1 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[2]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 2 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[3]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 3 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[4]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 4 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[5]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 5 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[6]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 6 ? strjoin(strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[7]->kn->name)), ((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->level > 7 ? strjoin("/", stringof(((T->cgroups->dfl_cgrp->level > 0 || !memory_cgrp_v1 || T->cgroups->subsys[memory_cgrp_id]->cgroup->root->hierarchy_id == 0 ? T->cgroups->dfl_cgrp : T->cgroups->subsys[memory_cgrp_id]->cgroup))->ancestors[8]->kn->name)) : "") : "") : "") : "") : "") : "") : "");
};
