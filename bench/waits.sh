#!/usr/bin/env bash
# Wait sampling's cost (issue 32): `storbench run --metrics-only --dsn` reads
# pg_stat_activity --wait-rate times a second on its observer connection while a
# separate storbench run drives N users (no sampling of its own); the same with
# --wait-rate 0 (the 1 Hz counters only) is the baseline. Each figure is CPU time
# between SETTLE and SETTLE+LONG seconds after the observer starts (past start-up),
# in % of one core: the sampler's (storbench's own /proc/PID/stat) and the server's
# (the observer connection's backend, /proc/PID/stat: the queries' whole server
# cost; the backends being read pay nothing, pg_stat_activity is read from shared
# memory by the reader). 4 and 100 users, one warehouse.
# Usage: bash bench/waits.sh [seconds, default 40]   (environment: RATE=10 SETTLE=5 USERS="4 100")
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
long=${1:-40}
settle=${SETTLE:-5}
rate=${RATE:-10}
work=$(mktemp -d /tmp/storbench-waits-bench.XXXXXX)
disk=$(mktemp -d "$PWD/.bench-waits.XXXXXX")
load_pid=
cleanup() {
  if [ -n "$load_pid" ]; then kill "$load_pid" 2>/dev/null || true; wait "$load_pid" 2>/dev/null || true; fi
  pg_stop
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
pg_start "$disk/pg" "max_connections = 130" "shared_buffers = 256MB"
"$SB" build --dsn "$DSN" --warehouses 1 >/dev/null
tck=$(getconf CLK_TCK)

cpu_of() { # pid: utime + stime in ticks
  awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
observer_backend() { # the backend of the observer's connection (in database postgres)
  psql -Atq -h 127.0.0.1 -p "$PGPORT" -U postgres -c \
    "SELECT pid FROM pg_stat_activity WHERE datname = 'postgres' AND backend_type = 'client backend' AND pid <> pg_backend_pid()" postgres | head -1
}

measure() { # users, wait rate → "sampler% server%"
  local users=$1 r=$2 obs backend a b sa sb
  "$SB" run --metrics-only --dsn "$DSN" --duration "$((settle + long + 3))s" --io-latency off --wait-rate "$r" >"$work/obs.out" &
  obs=$!
  sleep "$settle"
  backend=$(observer_backend)
  a=$(cpu_of "$obs"); sa=$(cpu_of "$backend")
  sleep "$long"
  b=$(cpu_of "$obs"); sb=$(cpu_of "$backend")
  wait "$obs"
  python3 -c "print(f'{100*($b-$a)/$tck/$long:.3f} {100*($sb-$sa)/$tck/$long:.3f}')"
}

echo "wait sampling at $rate Hz: CPU in % of one core over ${long} s ($(nproc) cores, $(uname -r), $(psql -V | cut -d' ' -f3))"
for users in ${USERS:-4 100}; do
  "$SB" run --dsn "$DSN" --users "$users" --ramp 2s --duration "$((3 * (settle + long + 5)))s" --no-metrics >"$work/load.out" 2>&1 &
  load_pid=$!
  sleep 8
  read -r s0 b0 < <(measure "$users" 0)
  read -r s1 b1 < <(measure "$users" "$rate")
  active=$(psql -Atq -h 127.0.0.1 -p "$PGPORT" -U postgres -c "SELECT count(*) FROM pg_stat_activity WHERE datname = 'tpcc' AND state <> 'idle'" postgres)
  python3 -c "
s0, b0, s1, b1 = $s0, $b0, $s1, $b1
print(f'$users users ({$active} active at one reading): sampler {s1:.3f}% at $rate Hz vs {s0:.3f}% without, {s1-s0:+.3f}% of a core;'
      f' server (the observer backend) {b1:.3f}% vs {b0:.3f}%, {b1-b0:+.3f}% of a core')"
  kill "$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=
done
