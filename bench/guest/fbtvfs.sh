#!/bin/sh
# fbt::vfs_*:entry with -x debug step times, twice, then bpftrace's
# kprobe:vfs_*. Run in a guest from the repository root:
#   ../shared/vm/run-kernel -k linux-image-6.1.0-56-amd64-unsigned -m 4096 -c 2 -t 900 'sh bench/guest/fbtvfs.sh bin/dtrace'
D=${1:-bin/dtrace}
uname -r
for i in 1 2; do
	t0=$(date +%s.%N)
	$D -x debug -q -n 'fbt::vfs_*:entry { @[probefunc] = count(); } BEGIN { exit(0); }' > /dev/null 2> /tmp/fbtvfs.err
	echo "dtrace run $i: $(echo "$(date +%s.%N) - $t0" | bc) s"
	grep -E "loading|attaching|attached|detach" /tmp/fbtvfs.err
done
t0=$(date +%s.%N)
bpftrace -e 'kprobe:vfs_* { @[func] = count(); } BEGIN { exit(); }' > /dev/null 2>&1
echo "bpftrace: $(echo "$(date +%s.%N) - $t0" | bc) s"
