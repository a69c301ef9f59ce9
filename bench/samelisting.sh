#!/bin/bash
# Per-event cost unchanged, as code: the -S listings (the BPF of every
# clause) of programs that use none of an option's features must be the
# same from two dtrace binaries. usage: bench/samelisting.sh OLD_DTRACE NEW_DTRACE
# Both binaries must list in the same layout: since the commit that made
# -S print dtrace-utils' layout (internal/bpfdis), older binaries print
# cilium/ebpf's, and every line differs.
# Prints "same" per program, or the diff; exits 1 on any difference.
OLD=$1 NEW=$2 status=0
progs=(
  'syscall::getppid:entry { @[execname] = count(); }'
  'syscall::read:entry { printf("%d %s %d\n", pid, execname, arg2); }'
  'syscall::write:entry { flow->req = ++n; } syscall::write:return { printf("%d %d\n", flowid, flow->req); }'
  'syscall::read:entry, syscall::read:return { @q = quantize(arg2); }'
)
for p in "${progs[@]}"; do
  a=$(mktemp) b=$(mktemp)
  # Listings name the run's temporary addresses nowhere; they compile
  # the same source for the same kernel.
  "$OLD" -S -e -n "$p" > "$a" 2>&1
  "$NEW" -S -e -n "$p" > "$b" 2>&1
  if cmp -s "$a" "$b"; then echo "same: $p"; else echo "DIFFERENT: $p"; diff "$a" "$b" | head -20; status=1; fi
  rm -f "$a" "$b"
done
exit $status
