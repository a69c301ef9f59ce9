#!/bin/sh
# guestmods.sh: in a run-kernel guest (which has no modules), loads loop and
# ext4 from the guest kernel's package, so that TestBlockIO can make ext4 on a
# loop device: run-kernel 'internal/flowtest/testdata/guestmods.sh; ...'
K=$(ls -d /var/cache/run-kernel/*/root/lib/modules/$(uname -r) | head -1)/kernel
for m in lib/crc16 fs/mbcache fs/jbd2/jbd2 crypto/crc32c_generic fs/ext4/ext4 drivers/block/loop; do
  f=$(ls $K/$m.ko* 2>/dev/null | head -1); [ -n "$f" ] || continue
  case $f in *.xz) xz -dc $f > /tmp/m.ko;; *.zst) zstd -qdc $f > /tmp/m.ko;; *) cp $f /tmp/m.ko;; esac
  insmod /tmp/m.ko 2>&1 | grep -v "File exists"
done
ls /dev/loop-control
