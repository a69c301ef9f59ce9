#!/bin/sh
#
# doio.sh FILE SIZE MOUNTSCRIPT MOUNTARGS...
#
# Block I/O for the io shell tests (io/tst.local, io/tst.wait), which
# trace it on the device of FILE's file system. FILE is at the top of the
# file system: its directory is the mount point, which MOUNTSCRIPT
# MOUNTARGS... mounts. doio.sh writes SIZE bytes to FILE and syncs them
# to the device (the writes are submitted, and waited for, by this
# script's own process), unmounts the file system and mounts it again by
# running MOUNTSCRIPT MOUNTARGS..., so that nothing of FILE is left in
# memory, then reads FILE back, which reads it from the device. Exits 1
# if what it reads back differs from what it wrote.
#
# A block device under the file system (a loop device) is held open
# across the remount, so that the kernel does not release it as the file
# system is unmounted and the mount script can mount the file system from
# the same device: the tests name the device before they start this
# script.
#
# Part of github.com/dtrace-go/dtrace's conformance harness.

if [ $# -lt 3 ]; then
	echo "usage: $0 FILE SIZE MOUNTSCRIPT MOUNTARGS..." >&2
	exit 2
fi
file=$1
size=$2
shift 2

mnt=$(dirname "$file")
if ! mountpoint -q "$mnt"; then
	echo "$0: $mnt, the directory of $file, is not a mount point" >&2
	exit 1
fi

# Write and fsync (conv=fsync): the page cache is written back and waited
# for in this process.
dd if=/dev/urandom of="$file" bs="$size" count=1 iflag=fullblock conv=fsync status=none || exit 1
sync
sum=$(cksum <"$file")

src=$(findmnt -n -o SOURCE --mountpoint "$mnt")
if [ -b "$src" ] && (exec 3<"$src") 2>/dev/null; then
	exec 3<"$src"
fi
umount "$mnt" || exit 1
"$@" || exit 1
exec 3<&-

if [ "$(cksum <"$file")" != "$sum" ]; then
	echo "$0: $file reads back other than it was written" >&2
	exit 1
fi
exit 0
