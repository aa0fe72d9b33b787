#!/usr/bin/env bash
# Open-loop load's cost and precision (issue 33), on a throwaway PostgreSQL 15 on
# loopback, one warehouse, client and server sharing the cores, --client-cpus 1:
#   1. the scheduler holds the offered rate: --rate 50000 (TPM) from one client with
#      Poisson and with uniform arrivals: arrived and achieved vs offered, schedule
#      lag, over a window of SECONDS;
#   2. the client CPU per transaction in rate mode vs closed-loop at the same
#      throughput: 4 closed-loop users give a throughput T; 4 open-loop users are
#      offered 0.9 T; each REPS times, the minimum and median of µs per completed
#      transaction (storbench's getrusage over the timed window, in its result).
# Usage: bash bench/openloop.sh [seconds per run, default 30]   (environment: REPS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DUR=${1:-30}
REPS=${REPS:-3}
work=$(mktemp -d /tmp/storbench-openloop.XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
pg_start "$work/pgdata" "shared_buffers = 256MB" "max_connections = 100"
"$SB" build --dsn "$DSN" --warehouses 1 >/dev/null
json() { python3 -c "import json,sys; r=json.load(open('$1')); print($2)"; }
run() { # json file, flags...
  local out=$1; shift
  "$SB" run --dsn "$DSN" --ramp 3s --duration "${DUR}s" --no-metrics --client-cpus 1 --json "$out" "$@" >/dev/null
}
echo "== $(nproc) CPUs, $(uname -r), PostgreSQL $(psql -At -h 127.0.0.1 -U postgres -c 'SHOW server_version' postgres), ${DUR} s windows"

echo "-- 1. offered 50,000 TPM from one client (8 users)"
for arrivals in poisson uniform; do
  run "$work/r.json" --users 8 --rate 50000 --arrivals "$arrivals"
  json "$work/r.json" "f\"$arrivals: arrived {r['rate']['arrived_tpm']:.0f} TPM ({100*(r['rate']['arrived_tpm']/50000-1):+.2f}% of offered), achieved {r['rate']['achieved_tpm']:.0f} ({100*(r['rate']['achieved_tpm']/50000-1):+.2f}% of offered, {100*(r['rate']['achieved_tpm']/r['rate']['arrived_tpm']-1):+.2f}% of arrived); schedule lag p50 {r['rate']['schedule_lag']['p50_ms']:.3f} ms p99 {r['rate']['schedule_lag']['p99_ms']:.3f} ms; client {r['client_cpu']['us_per_txn']:.1f} µs/txn, {100*r['client_cpu']['utilization']:.0f}% of its CPU\""
done

echo "-- 2. client CPU per transaction at the same throughput, the same 4 users"
# Closed-loop 4 users run at the database's capacity T; the open-loop run offers 0.9 T
# (at T itself the backlog would grow without end). A 1-user closed-loop run beside
# it is the cheapest a transaction gets: one wake-up each, none between.
closed=(); open=(); one=()
for rep in $(seq "$REPS"); do
  run "$work/c.json" --users 4
  tpm=$(json "$work/c.json" "r['tpm_client']")
  closed+=("$(json "$work/c.json" "r['client_cpu']['us_per_txn']")")
  rate=$(python3 -c "print(round(0.9*$tpm))")
  run "$work/o.json" --users 4 --rate "$rate"
  open+=("$(json "$work/o.json" "r['client_cpu']['us_per_txn']")")
  run "$work/one.json" --users 1
  one+=("$(json "$work/one.json" "r['client_cpu']['us_per_txn']")")
  echo "rep $rep: closed-loop 4 users $(json "$work/c.json" "f\"{r['tpm_client']:.0f} TPM, {r['client_cpu']['us_per_txn']:.1f} µs/txn\""); open-loop 4 users at $rate: $(json "$work/o.json" "f\"{r['tpm_client']:.0f} TPM, {r['client_cpu']['us_per_txn']:.1f} µs/txn, lag p50 {r['rate']['schedule_lag']['p50_ms']:.3f} p99 {r['rate']['schedule_lag']['p99_ms']:.2f} ms, users busy {100*r['rate']['users_busy']:.0f}%\""); closed-loop 1 user $(json "$work/one.json" "f\"{r['tpm_client']:.0f} TPM, {r['client_cpu']['us_per_txn']:.1f} µs/txn\"")"
done
python3 - "${closed[*]}" "${open[*]}" "${one[*]}" <<'PY'
import statistics, sys
c, o, n = ([float(x) for x in a.split()] for a in sys.argv[1:4])
print(f"µs per transaction: closed-loop 4 users min {min(c):.1f} median {statistics.median(c):.1f}; open-loop 4 users at 0.9x min {min(o):.1f} median {statistics.median(o):.1f} "
      f"({100*(min(o)/min(c)-1):+.1f}% min, {100*(statistics.median(o)/statistics.median(c)-1):+.1f}% median); closed-loop 1 user min {min(n):.1f} median {statistics.median(n):.1f}")
PY

echo "-- 3. the floor: one wait for an arrival, nothing else (bench/wakefloor, 8 goroutines, 50,000 a minute)"
go run ./bench/wakefloor -wait timer -duration "${DUR}s"
go run ./bench/wakefloor -wait timerfd -duration "${DUR}s"
