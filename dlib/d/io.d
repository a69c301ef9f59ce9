/*
 * io.d: the argument types of the io provider (buffers, devices and
 * files) and the fds[] array of the current process's open files.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on provider sched

typedef char *caddr_t;

/* An I/O request. */
typedef struct bufinfo {
	int b_flags;			/* B_* flags */
	size_t b_bcount;		/* bytes to transfer */
	caddr_t b_addr;			/* buffer address */
	uint64_t b_lblkno;		/* logical block number */
	uint64_t b_blkno;		/* block number on the device */
	size_t b_resid;			/* bytes not transferred */
	size_t b_bufsize;		/* buffer size */
	caddr_t b_iodone;		/* completion routine */
	int b_error;			/* error */
	dev_t b_edev;			/* device */
} bufinfo_t;

/* b_flags */
/* constants: io.d 1 */

/* The kernel's request bits (linux/blk_types.h). */
/* constants: io.d 2 */

/* A buffer head's direction is the write flag in arg1. */
translator bufinfo_t < struct buffer_head *B > {
	b_flags = (int)arg1 & 0x01 ? B_WRITE : B_READ;
	b_addr = B->b_data;
	b_bcount = B->b_size;
	b_lblkno = B->b_blocknr;
	b_blkno = B->b_blocknr;
	b_resid = 0;
	b_bufsize = B->b_size;
	b_iodone = (caddr_t)B->b_end_io;
	b_error = 0;
	b_edev = B->b_bdev->bd_dev;
};

translator bufinfo_t < struct bio *B > {
	b_flags = ((int)B->bi_opf & REQ_WRITE ? B_WRITE : B_READ) |
	    ((int)B->bi_opf & REQ_SYNC ? 0 : B_ASYNC) |
	    ((int)B->bi_flags & (1 << BIO_USER_MAPPED) ? B_PAGEIO : B_PHYS);
	b_addr = 0;
	b_bcount = B->bi_iter.bi_size;
	b_lblkno = B->bi_iter.bi_sector;
	b_blkno = B->bi_iter.bi_sector;
	b_resid = 0;
	b_bufsize = B->bi_iter.bi_size;
	b_iodone = (caddr_t)B->bi_end_io;
	b_error = 0;
	b_edev = B->bi_bdev == NULL ? 0 : B->bi_bdev->bd_dev;
};

/*
 * A block layer request (the io provider's start and done). The
 * operation is the low byte of cmd_flags; writing operations are odd.
 */
translator bufinfo_t < struct request *R > {
	b_flags = ((int)R->cmd_flags & REQ_WRITE ? B_WRITE : B_READ) |
	    ((int)R->cmd_flags & REQ_SYNC ? 0 : B_ASYNC);
	b_addr = 0;
	b_bcount = R->__data_len;
	b_lblkno = R->__sector;
	b_blkno = R->__sector;
	b_resid = 0;
	b_bufsize = R->__data_len;
	b_iodone = (caddr_t)R->end_io;
	b_error = 0;
	b_edev = R->part != NULL ? R->part->bd_dev :
	    (R->q->disk->major << 20) | R->q->disk->first_minor;
};

/* A device. */
typedef struct devinfo {
	int dev_major;			/* major number */
	int dev_minor;			/* minor number */
	int dev_instance;		/* instance */
	string dev_name;		/* driver name */
	string dev_statname;		/* name as iostat shows it */
	string dev_pathname;		/* path of the device file */
} devinfo_t;

/*
 * The devinfo_t translators are in io-dev.d and io-dev61.d: kernels from
 * 6.10 keep a block device's partition number in the low byte of
 * __bd_flags, older ones in bd_partno; the file that does not check
 * against the running kernel is left out.
 */

/* A file. */
typedef struct fileinfo {
	string fi_name;			/* base name */
	string fi_dirname;		/* directory */
	string fi_pathname;		/* full path */
	loff_t fi_offset;		/* offset in the file */
	string fi_fs;			/* file system type */
	string fi_mount;		/* mount point */
	int fi_oflags;			/* open(2) flags */
} fileinfo_t;

translator fileinfo_t < struct buffer_head *B > {
	fi_name = "<unknown>";
	fi_dirname = "<unknown>";
	fi_pathname = "<unknown>";
	fi_offset = 0;
	fi_fs = "<unknown>";
	fi_mount = "<unknown>";
	fi_oflags = 0;
};

/* open(2) flags (fi_oflags), octal as in fcntl.h. */
/* constants: io.d 3 */

/*
 * The kernel lets only fentry/fexit and LSM programs call bpf_d_path(),
 * and this kernel refuses those: the probes' programs cannot build a
 * file's path, which reads "<unknown>" (as in DTrace for Linux).
 */
translator fileinfo_t < struct file *F > {
	fi_name = F == NULL ? "<none>" : stringof(F->f_path.dentry->d_name.name);
	fi_dirname = F == NULL ? "<none>" : "<unknown>";
	fi_pathname = F == NULL ? "<none>" : "<unknown>";
	fi_offset = F == NULL ? 0 : F->f_pos;
	fi_fs = F == NULL ? "<none>" : stringof(F->f_path.mnt->mnt_sb->s_type->name);
	fi_mount = F == NULL ? "<none>" : "<unknown>";
	fi_oflags = F == NULL ? 0 : F->f_flags;
};

/* The open files of the current process, by descriptor. */
inline fileinfo_t fds[int fd] = xlate <fileinfo_t> (
    fd >= 0 && fd < curthread->files->fdt->max_fds ?
    curthread->files->fdt->fd[fd] : NULL);
#pragma D attributes Stable/Stable/Common fds
