#!/bin/bash
# A/B per-event cost of two dtrace binaries on syscall::getppid:entry { @[execname] = count(); },
# alternating with untraced runs, the getppid loop pinned to CPU 1 (bench/README.md, 2d).
# usage: bench/abtest.sh LOOP OLD_DTRACE NEW_DTRACE [M] [ROUNDS]; prints each run's loop CPU ns
L=$1; OLD=$2; NEW=$3; M=${4:-2000000}; R=${5:-5}
for r in $(seq $R); do
  for v in U OLD U NEW; do
    if [ $v = U ]; then out=$(taskset -c 1 $L $M); echo "$v ${out%% *}"; continue; fi
    bin=$OLD; [ $v = NEW ] && bin=$NEW
    f=$(mktemp); $bin -q -n 'BEGIN { printf("ready\n"); } syscall::getppid:entry { @[execname] = count(); }' > $f 2>&1 &
    p=$!
    for i in $(seq 200); do grep -q ready $f && break; sleep 0.05; done
    out=$(taskset -c 1 $L $M); kill -INT $p; wait $p
    n=$(grep getppid-loop $f | awk '{print $2}')
    echo "$v ${out%% *} count=$n"; rm -f $f
  done
done
