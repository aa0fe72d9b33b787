#!/usr/bin/env bash
# Metrics sampler figures (issues 4 and 22): CPU the sampler itself uses at 1 s and
# 100 ms, with and without per-I/O latency tracing (bpftrace, a child process counted
# here), with and without a database (its counters and its server's processes sampled
# by role), while fio keeps the sampled disk busy (4 KiB random reads, direct, iodepth
# 32, libaio, capped at FIO_IOPS) so that the tracing has I/Os to trace.
# Each figure is the CPU of storbench and its children (bpftrace) read from
# /proc/PID/stat between SETTLE seconds after the start (past start-up and bpftrace's
# attach) and SETTLE+LONG, so start-up is not spread over the run; 3 rounds, min and
# median, with the disk's read IOPS over the same seconds and the load average.
# Usage: bash bench/metrics.sh [seconds, default 60]   (environment, with defaults:
#   ROUNDS=3 SETTLE=8 FIO_IOPS=50000 FIO_SIZE=2G; NO_FIO=1 leaves the disk idle)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
long=${1:-60}
rounds=${ROUNDS:-3}
settle=${SETTLE:-8}
work=$(mktemp -d /tmp/storbench-metrics-bench.XXXXXX)
# The sampled directory is beside the checkout: the system temp dir may be a tmpfs,
# where there is no disk to sample or trace.
disk=$(mktemp -d "$PWD/.bench-metrics.XXXXXX")
chmod 755 "$disk"
fio_pid=
cleanup() {
  if [ -n "$fio_pid" ]; then
    kill "$fio_pid" 2>/dev/null || true
    wait "$fio_pid" 2>/dev/null || true
  fi
  pg_stop
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
dev=$(basename "$(df --output=source "$disk" | tail -1)")

if [ "${NO_FIO:-0}" != 1 ]; then
  fio_args=(--name=randread --filename="$disk/fio.dat" --size="${FIO_SIZE:-2G}" --rw=randread --bs=4k --direct=1
    --iodepth=32 --ioengine=libaio --rate_iops="${FIO_IOPS:-50000}" --time_based --runtime=86400)
  fio "${fio_args[@]}" --create_only=1 >/dev/null # lays the file out with data: holes are read without I/O
  fio "${fio_args[@]}" >"$work/fio.out" 2>&1 &
  fio_pid=$!
  sleep 3
fi
pg_start "$disk/pg" "shared_buffers = 128MB"

# tree_cpu PID: CPU seconds of PID and of its children, reaped and live: "own bpftrace".
tree_cpu() {
  python3 - "$1" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
def stat(pid):
    s = open(f"/proc/{pid}/stat").read()
    return s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()
comm, f = stat(sys.argv[1])
own = sum(int(x) for x in f[11:15])  # utime stime cutime cstime (reaped children)
kids = 0
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            c, g = stat(pid)
        except OSError:
            continue
        if g[1] == sys.argv[1]:
            kids += int(g[11]) + int(g[12])
print(own / hz, kids / hz)
PY
}
reads() { awk -v d="$dev" '$3 == d {print $4}' /proc/diskstats; }

measure() { # interval io-latency database(yes/no)
  local dsn=() i pid a b r0 r1 out=$work/rounds
  [ "$3" = yes ] && dsn=(--dsn "$DSN")
  : >"$out"
  for i in $(seq "$rounds"); do
    "$SB" run --metrics-only --duration "$((settle + long + 3))s" --metrics-interval "$1" --path "$disk" \
      --io-latency "$2" "${dsn[@]}" >"$work/run.out" 2>&1 &
    pid=$!
    sleep "$settle"
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "storbench run --metrics-only ended early:"; cat "$work/run.out"; exit 1
    fi
    a=$(tree_cpu "$pid") || { echo "storbench run --metrics-only ended early:"; cat "$work/run.out"; exit 1; }
    r0=$(reads); l0=$(cut -d' ' -f1 /proc/loadavg)
    sleep "$long"
    b=$(tree_cpu "$pid") || { echo "storbench run --metrics-only ended early:"; cat "$work/run.out"; exit 1; }
    r1=$(reads); l1=$(cut -d' ' -f1 /proc/loadavg)
    wait "$pid"
    echo "$a $b $r0 $r1 $l0 $l1" >>"$out"
  done
  python3 - "$1" "$2" "$3" "$long" "$out" <<'PY'
import statistics, sys
interval, lat, db, long, path = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
rows = [list(map(float, l.split())) for l in open(path)]
total = [100 * ((r[2] + r[3]) - (r[0] + r[1])) / long for r in rows]
kids = [100 * (r[3] - r[1]) / long for r in rows]
iops = [(r[5] - r[4]) / long for r in rows]
fmt = lambda xs: f"min {min(xs):.2f}% median {statistics.median(xs):.2f}%"
print(f"interval {interval:>5}, io-latency {lat:<3}, database {db:<3}: {fmt(total)} of one core"
      f" (bpftrace {fmt(kids)}); rounds {', '.join(f'{t:.2f}' for t in total)};"
      f" disk {min(iops)/1e3:.0f}-{max(iops)/1e3:.0f}k read IOPS; load average {', '.join(f'{r[6]:.1f}' for r in rows)}")
PY
}

echo "sampler CPU ($(nproc) cores, $(uname -r)), over ${long} s after ${settle} s, $rounds rounds; disk $dev$([ -n "$fio_pid" ] && echo ", fio randread 4k direct iodepth 32 capped at ${FIO_IOPS:-50000} IOPS"); goal < 0.5% of one core at 1 s, < 2% at 100 ms"
for db in no yes; do
  measure 1s off $db
  measure 100ms off $db
  if [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null; then
    measure 1s on $db
    measure 100ms on $db
  else
    echo "per-I/O latency tracing not measured: needs root and bpftrace"
  fi
done
