#!/bin/sh
# pid probes at scale: every function entry of postgres under -c, with
# dtrace's -x debug step times, then the stale-event sweep after a
# SIGKILL. Run in a guest from the repository root, dtrace built first:
#   go build -o bin/dtrace ./cmd/dtrace
#   ../shared/vm/run-kernel [-k linux-image-6.1.0-56-amd64-unsigned] -m 4096 -c 2 -t 1500 'sh bench/guest/pidscale.sh bin/dtrace'
D=${1:-bin/dtrace}
PG=/usr/lib/postgresql/15/bin/postgres
uname -r
t0=$(date +%s.%N)
echo "probes listed: $($D -l -n "pid\$target:postgres::entry" -c "$PG --version" 2>/dev/null | tail -n +2 | wc -l)"
echo "list: $(echo "$(date +%s.%N) - $t0" | bc) s"
t0=$(date +%s.%N)
$D -x debug -q -n 'pid$target:postgres::entry { @ = count(); } END { printa("calls %@d\n", @); }' -c "$PG --version" 2> /tmp/pidscale.err
echo "rc=$? run: $(echo "$(date +%s.%N) - $t0" | bc) s"
grep -E "loading|attaching|attached|detach" /tmp/pidscale.err
# A dtrace killed with SIGKILL leaves its tracefs uprobe events (on
# kernels without uprobe_multi); the next dtrace removes them.
T=/sys/kernel/tracing/uprobe_events
$D -q -n 'pid$target:libc.so.6:str*:entry { @ = count(); }' -c 'sleep 60' > /dev/null 2>&1 &
K=$!
i=0
while [ $i -lt 600 ] && ! grep -q "dtrace_go_$K/" $T; do sleep 0.5; i=$((i + 1)); done
echo "uprobe_events lines of dtrace $K while it runs: $(grep -c "dtrace_go_$K/" $T)"
kill -9 $K
wait $K 2>/dev/null
echo "after kill -9: $(grep -c "dtrace_go_$K/" $T)"
$D -q -n 'pid$target:libc.so.6:str*:entry { @ = count(); }' -c true > /dev/null
echo "after the next dtrace: $(grep -c "dtrace_go_$K/" $T)"
