#!/bin/sh
#
# io-mount-local.sh DIR FSTYPE OPTIONS
#
# Mounts the file system image DIR.img (of type FSTYPE) on the directory
# DIR through a loop device, with the mount options OPTIONS (a
# comma-separated list). A trigger of the io shell tests (io/tst.local,
# io/tst.wait), which name the loop device's statname: they create the
# image and the directory, and unmount DIR when they are done.
#
# When a loop device is bound to the image already (doio.sh keeps the one
# of the first mount open across its remount), the file system is mounted
# from it, so that the device, and its name, stay the same; otherwise
# mount sets up a loop device, which the kernel releases when the file
# system is unmounted (and nothing else has the device open).
#
# Part of github.com/dtrace-go/dtrace's conformance harness.

if [ $# -ne 3 ]; then
	echo "usage: $0 DIR FSTYPE OPTIONS" >&2
	exit 2
fi
dir=$1
fstype=$2
options=$3
img=$dir.img

if [ ! -f "$img" ]; then
	echo "$0: no image $img" >&2
	exit 1
fi
dev=$(losetup -j "$img" | sed -n '1s/:.*//p')
if [ -n "$dev" ]; then
	exec mount -t "$fstype" -o "$options" "$dev" "$dir"
fi
exec mount -t "$fstype" -o "loop,$options" "$img" "$dir"
