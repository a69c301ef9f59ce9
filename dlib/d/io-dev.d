/*
 * io-dev.d: the devinfo_t translators of the io provider for kernels from 6.10,
 * which keep a block device's partition number in the low byte of
 * __bd_flags.
 * io-dev61.d, for older kernels, is made from this file (variants in
 * dlib.go): keep the partition number's expression one to replace.
 * (Part of the D library of github.com/dtrace-go/dtrace.)
 */

#pragma D depends_on module vmlinux
#pragma D depends_on library io.d

translator devinfo_t < struct buffer_head *B > {
	dev_major = getmajor(B->b_bdev->bd_dev);
	dev_minor = getminor(B->b_bdev->bd_dev);
	dev_instance = 0;
	dev_name = B->b_bdev->bd_disk->part0->bd_device.parent != NULL ?
	    (B->b_bdev->bd_disk->part0->bd_device.parent->driver->name != NULL ?
		stringof(B->b_bdev->bd_disk->part0->bd_device.parent->driver->name) :
		"<none>") :
	    B->b_bdev->bd_disk->part0->bd_device.driver->name != NULL ?
		stringof(B->b_bdev->bd_disk->part0->bd_device.driver->name) :
		"<none>";
	dev_statname = (B->b_bdev->__bd_flags.counter & 255) == 0 ?
	    stringof(B->b_bdev->bd_disk->disk_name) :
	    strjoin(stringof(B->b_bdev->bd_disk->disk_name),
		lltostr(B->b_bdev->__bd_flags.counter & 255));
	dev_pathname = strjoin("/dev/",
	    (B->b_bdev->__bd_flags.counter & 255) == 0 ?
	    stringof(B->b_bdev->bd_disk->disk_name) :
	    strjoin(stringof(B->b_bdev->bd_disk->disk_name),
		lltostr(B->b_bdev->__bd_flags.counter & 255)));
};

/* A bio without a block device is NFS's. */
translator devinfo_t < struct bio *B > {
	dev_major = B->bi_bdev == NULL ? 0 : getmajor(B->bi_bdev->bd_dev);
	dev_minor = B->bi_bdev == NULL ? 0 : getminor(B->bi_bdev->bd_dev);
	dev_instance = 0;
	dev_name = B->bi_bdev == NULL ? "nfs" :
	    B->bi_bdev->bd_disk->part0->bd_device.parent != NULL &&
	    B->bi_bdev->bd_disk->part0->bd_device.parent->driver != NULL ?
	    stringof(B->bi_bdev->bd_disk->part0->bd_device.parent->driver->name) :
	    "<none>";
	dev_statname = B->bi_bdev == NULL ? "nfs" :
	    (B->bi_bdev->__bd_flags.counter & 255) == 0 ?
	    stringof(B->bi_bdev->bd_disk->disk_name) :
	    strjoin(stringof(B->bi_bdev->bd_disk->disk_name),
		lltostr(B->bi_bdev->__bd_flags.counter & 255));
	dev_pathname = B->bi_bdev == NULL ? "<nfs>" : "<unknown>";
};

/*
 * A request's device: its partition when the request is accounted to
 * one, else the whole disk.
 */
translator devinfo_t < struct request *R > {
	dev_major = R->part != NULL ? getmajor(R->part->bd_dev) : R->q->disk->major;
	dev_minor = R->part != NULL ? getminor(R->part->bd_dev) : R->q->disk->first_minor;
	dev_instance = 0;
	dev_name = R->q->disk->part0->bd_device.parent != NULL &&
	    R->q->disk->part0->bd_device.parent->driver != NULL ?
	    stringof(R->q->disk->part0->bd_device.parent->driver->name) :
	    "<none>";
	dev_statname = R->part == NULL || (R->part->__bd_flags.counter & 255) == 0 ?
	    stringof(R->q->disk->disk_name) :
	    strjoin(stringof(R->q->disk->disk_name),
		lltostr(R->part->__bd_flags.counter & 255));
	dev_pathname = strjoin("/dev/",
	    R->part == NULL || (R->part->__bd_flags.counter & 255) == 0 ?
	    stringof(R->q->disk->disk_name) :
	    strjoin(stringof(R->q->disk->disk_name),
		lltostr(R->part->__bd_flags.counter & 255)));
};

