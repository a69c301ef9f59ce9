#!/usr/bin/env bash
# The user-stack unwinder's costs (docs/STACKS.md; results in
# bench/README.md section 5). As root, from the repository:
#   bash bench/ustack.sh [seconds per run, default 5]
# Prints: the BPF cost of one profile sample with a 20-frame stack walked
# by CFI and by frame pointers (kernel.bpf_stats_enabled: run_time_ns /
# run_cnt of the perf-event program, from dtrace's fdinfo); the cost a busy
# python3 pays, as a share of its CPU; the unwind tables' memory for every
# object python3 maps; and the depth our ustack() and bpftrace's ustack
# reach on the same programs.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
w=$(mktemp -d)
old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; rm -rf "$w"' EXIT
echo 1 >/proc/sys/kernel/bpf_stats_enabled
go build -o "$w/dtrace" ./cmd/dtrace
gcc -O2 -fno-omit-frame-pointer -o "$w/deep" bench/ustack/deep.c
gcc -O2 -fomit-frame-pointer -o "$w/chain" internal/testutil/testprog/testdata/chain.c
head -c 200M /dev/urandom >"$w/data"

# progcost PID: "runs ns" summed over the perf-event (type 7) programs
# the process holds.
progcost() {
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_type:/{t=$2} /^run_time_ns:/{ns=$2} /^run_cnt:/{c=$2} END{if (t == 7) print c, ns}' "$f" 2>/dev/null || true
	done | awk '{c += $1; ns += $2} END {printf "%d %d\n", c, ns}'
}

# depth FILE: samples and mean frames per sample of an @[ustack()] =
# count() printing (ours: frames then a count line; bpftrace: "@[",
# frames, "]: count").
depth() {
	awk '
		/^@\[/ { n = 0; next }
		/^\]: [0-9]+$/ { c = $2; s += c; f += c * n; n = 0; next }
		/^ *[0-9]+$/ { s += $1; f += $1 * n; n = 0; next }
		NF > 0 { n++ }
		END { if (s) printf "%d samples, %.1f frames\n", s, f / s; else print "no samples" }' "$1"
}

# ours NAME FLAGS KEY CMD: profile CMD's samples (@[KEY] = count()) for
# $secs; print the BPF time, runs, samples and depth; leave the total ns
# in $total and the samples in $samples.
ours() {
	local name=$1 flags=$2 key=$3
	shift 3
	"$w/dtrace" $flags -q -n 'profile-997 /pid == $target/ { @['"$key"'] = count(); }' -c "$*" >"$w/$name.out" 2>"$w/$name.err" &
	local d=$!
	sleep "$secs"
	local rc
	rc=$(progcost $d)
	kill -INT $d 2>/dev/null || true
	wait $d || true
	runs=${rc% *}
	total=${rc#* }
	samples=$(depth "$w/$name.out" | awk '{print $1}')
	printf "%-10s %8d runs %12d ns in all   %s\n" "$name" "$runs" "$total" "$(depth "$w/$name.out")"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
echo "== one sample: the same 20-frame stack (deep, built with frame pointers, pinned to CPU 1)"
# The same number of runs each time (997 per CPU-second): what a walk
# costs is a variant's time less the keyless run's, per sample.
# The keyless run's cost per run (the predicate, the aggregation) is taken
# off every run of the others; the rest is the walk's, per sample.
ours none "" "pid" taskset -c 1 "$w/deep"
per=$((total / runs))
echo "  a run without a walk: $per ns"
ours cfi "" "ustack()" taskset -c 1 "$w/deep"
echo "  CFI walk: $(((total - per * runs) / samples)) ns per sample"
ours fp "-x ustackfp" "ustack()" taskset -c 1 "$w/deep"
echo "  frame-pointer walk (bpf_get_stack): $(((total - per * runs) / samples)) ns per sample"

echo "== python3 busy loop (/usr/bin/python3, ${secs}s)"
DTRACE_UWDEBUG=1 "$w/dtrace" -q -n 'profile-997 /pid == $target/ { @[ustack()] = count(); }' -c "/usr/bin/python3 $PWD/internal/testutil/testprog/testdata/loop.py $secs" >"$w/py.out" 2>"$w/py.err" &
d=$!
sleep $((secs - 1))
rc=$(progcost $d)
wait $d || true
runs=${rc% *} ns=${rc#* }
samples=$(depth "$w/py.out")
n=$(echo "$samples" | awk '{print $1}')
echo "python3: $samples; BPF $ns ns over $runs runs, $n of them python's"
echo "  cost per python sample (upper bound: all runs' time / python's samples): $(echo "$ns / $n" | bc) ns"
echo "  share of python3's CPU at 997 samples per CPU-second: $(echo "scale=3; 100 * $ns / $n * 997 / 1000000000" | bc)%"
grep '^unwind:' "$w/py.err" | sed 's/^/  tables: /'
rows=$(grep -o 'Rows:[0-9]*' "$w/py.err" | cut -d: -f2)
echo "  table memory: $rows rows x 16 B = $(echo "scale=1; $rows * 16 / 1048576" | bc) MiB (inner array maps, plus the kernel's per-map overhead)"

echo "== depth beside bpftrace ($(bpftrace --version))"
for prog in chain python3 gzip; do
	case $prog in
	chain) cmd="$w/chain 100000000" ;;
	python3) cmd="/usr/bin/python3 $PWD/internal/testutil/testprog/testdata/loop.py $secs" ;;
	gzip) cmd="/usr/bin/gzip -1 -f -k $w/data" ;;
	esac
	timeout -s INT $((secs + 10)) "$w/dtrace" -q -n 'profile-997 /pid == $target/ { @[ustack()] = count(); } tick-'"$secs"'s { exit(0); }' -c "$cmd" >"$w/o.$prog" 2>/dev/null || true
	timeout -s INT $((secs + 2)) bpftrace -e 'profile:hz:997 /pid == cpid/ { @[ustack] = count(); }' -c "$cmd" >"$w/b.$prog" 2>/dev/null || true
	printf "%-8s ours: %-32s bpftrace: %s\n" "$prog" "$(depth "$w/o.$prog")" "$(depth "$w/b.$prog")"
done
