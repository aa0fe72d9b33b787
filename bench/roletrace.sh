#!/usr/bin/env bash
# Writes by process role from the block layer (issue 32): what counting the bytes of
# each block request by issuing task costs, under TPC-C. `run --metrics-only --dsn`
# with --io-latency on has bpftrace count them (iolatency.bt, block_bio_queue) beside
# the latency histogram; without --dsn it traces latency only. Each configuration's
# marginal CPU (storbench and bpftrace, its child) is (CPU of a long run - CPU of a
# short run) / the difference in length, as bench/roleio.sh, while a TPC-C run of 4
# users keeps the server writing. Then the in-kernel cost per request of each probe
# (kernel.bpf_stats_enabled: run_time_ns / run_cnt of bpftrace's programs), and the
# rows' writes against the disk's over one of the sampled runs.
# Root only (bpftrace). Usage: bash bench/roletrace.sh [seconds, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
long=${1:-30}
short=5
work=$(mktemp -d /tmp/storbench-roletrace-bench.XXXXXX)
# The server's directory is beside the checkout: the system temp dir may be a tmpfs.
disk=$(mktemp -d "$PWD/.bench-roletrace.XXXXXX")
load_pid=
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
  sysctl -qw kernel.bpf_stats_enabled="$stats_was"
  if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
  pg_stop
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
pg_start "$disk/pg" "shared_buffers = 128MB"
"$SB" build --dsn "$DSN" --warehouses 1 >/dev/null
# The load runs through every measurement (4 runs of short + long seconds, start-up).
"$SB" run --dsn "$DSN" --users 4 --duration "$((4 * (long + short + 30) + 60))s" --no-metrics >/dev/null 2>&1 &
load_pid=$!
sleep 5

measure() { # label, then the run's flags
  local label=$1
  shift
  sampler_cpu "$label" "$short" "$long" --path "$disk" "$@"
}

echo "sampler CPU at 1 s under TPC-C, 4 users, 1 warehouse ($(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg))"
measure "tracing latency and bytes by task, server by role, counters (--dsn, --io-latency on)" --dsn "$DSN" --io-latency on --json "$work/roles.json"
measure "server by role and counters, no tracing (--dsn, --io-latency off)" --dsn "$DSN" --io-latency off
measure "tracing latency only (no --dsn, --io-latency on)" --io-latency on
measure "nothing traced, no server (no --dsn, --io-latency off)" --io-latency off

python3 - "$work/roles.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["system"]["summary"]
disk = sum(d["write_mb_s"] for d in s["disks"])
rows = [r for r in s["process_io"] if r.get("write_mb_s") is not None]
print(f"rows' writes {sum(r['write_mb_s'] for r in rows):.2f} MB/s vs the disk's {disk:.2f} MB/s: " +
      ", ".join(f"{r['role']} {r['write_mb_s']:.2f}" for r in rows if r["write_mb_s"] > 0))
PY

echo "in-kernel cost per request (kernel.bpf_stats_enabled), the same TPC-C load, 10 s:"
sysctl -qw kernel.bpf_stats_enabled=1
"$SB" run --metrics-only --duration 10s --metrics-interval 1s --path "$disk" --dsn "$DSN" --io-latency on >/dev/null &
run_pid=$!
sleep 9
# bpftrace is storbench's child, or its grandchild when the shell forked first.
for bp in $(pgrep -x bpftrace -P "$(pgrep -P "$run_pid" | paste -sd, -),$run_pid"); do
  for fd in /proc/"$bp"/fdinfo/*; do
    grep -q prog_type "$fd" 2>/dev/null || continue
    awk -v fd="${fd##*/}" '/run_time_ns/{t=$2} /run_cnt/{c=$2} END{if (c > 0) printf "  probe (fd %s, in the order of iolatency.bt: issue, complete, bio_queue, signal): %.0f ns per run over %d runs\n", fd, t/c, c}' "$fd"
  done
done
wait "$run_pid"
