#!/bin/bash
# A/B per-event cost of two dtrace binaries on syscall::getppid:entry { @[execname] = count(); },
# alternating with untraced runs, the getppid loop pinned to CPU 1 (bench/README.md, 2d).
# usage: bench/abtest.sh LOOP OLD_DTRACE NEW_DTRACE [M] [ROUNDS]; prints each run's loop CPU ns
# PROG='syscall:::entry { @[probefunc] = count(); }' (say) measures another clause; KEY is the
# aggregation key its count is read under (getppid-loop; getppid for @[probefunc]).
L=$1; OLD=$2; NEW=$3; M=${4:-2000000}; R=${5:-5}
PROG=${PROG:-'syscall::getppid:entry { @[execname] = count(); }'}; KEY=${KEY:-getppid-loop}
for r in $(seq $R); do
  for v in U OLD U NEW; do
    if [ $v = U ]; then out=$(taskset -c 1 $L $M); echo "$v ${out%% *}"; continue; fi
    bin=$OLD; [ $v = NEW ] && bin=$NEW
    f=$(mktemp); $bin -q -n 'BEGIN { printf("ready\n"); } '"$PROG" > $f 2>&1 &
    p=$!
    for i in $(seq 200); do grep -q ready $f && break; sleep 0.05; done
    out=$(taskset -c 1 $L $M); kill -INT $p; wait $p
    n=$(awk -v k="$KEY" '$1 == k {print $2}' $f)
    echo "$v ${out%% *} count=$n"; rm -f $f
  done
done
