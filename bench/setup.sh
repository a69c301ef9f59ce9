#!/bin/sh
# Installs what bench/cmd/dtbench needs beside Go: bpftrace (the tracer we
# compare with) and gcc (for the getppid loop; without it the loop is Go).
# Debian/Ubuntu, as root. Skips apt when both are present.
set -e
need=""
command -v bpftrace >/dev/null 2>&1 || need="$need bpftrace"
command -v gcc >/dev/null 2>&1 || need="$need gcc libc6-dev"
if [ -n "$need" ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y $need || { apt-get update && apt-get install -y $need; }
fi
# Both tracers find tracepoints in tracefs.
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
bpftrace --version
