#!/usr/bin/env bash
# Measures the figures the TPROC-C core promises (see README "Measured figures"):
#   1. build time of 4 warehouses, and rows/s next to what COPY ingests from
#      pre-generated files (the practical limit of any loader);
#   2. NOPM at 1, 2, 4, 8 users in procedures and sql mode (4 warehouses);
#   3. client CPU per completed transaction at 4 and 64 users, procedures and sql mode,
#      over loopback TCP and a Unix-domain socket: 3 runs each, minimum and median, with
#      the load average at each run's start (the storbench process's own getrusage over
#      the timed window, divided by the transactions completed in it);
#  3b. the floor under it: one bare request/reply round trip (bench/wirefloor);
#   4. check wall time on 4 warehouses;
#   5. driver max RSS with 1000 users.
# MariaDB's and SQLite's client CPU per transaction: bash bench/engines.sh 4 20 4,64.
# Each on a throwaway PostgreSQL 15 on loopback, client and server sharing the cores.
# Usage: bash bench/tpcc.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
DUR=${1:-20}
work=$(mktemp -d /tmp/storbench-bench.XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
go build -o "$work/gendata" ./bench/gendata
go build -o "$work/wirefloor" ./bench/wirefloor
SB="$work/storbench"
json() { python3 -c "import json,sys; r=json.load(open('$1')); print($2)"; }

pg_start "$work/pgdata" "shared_buffers = 1GB" "max_connections = 1100" "max_wal_size = 4GB"
echo "== machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo), $(psql -At -h 127.0.0.1 -U postgres -c 'SHOW server_version')"

echo "== 1. load 4 warehouses"
for i in 1 2; do
  [ "$i" = 2 ] && "$SB" drop --dsn "$DSN" >/dev/null
  start=$(date +%s.%N)
  "$SB" build --dsn "$DSN" --warehouses 4 | tail -1
  echo "   build wall time: $(echo "$(date +%s.%N) - $start" | bc) s"
done
"$work/gendata" -dir "$work/data" -warehouses 4
chmod -R o+rx "$work" 
psql -q -h 127.0.0.1 -U postgres -c "CREATE DATABASE copylimit"
psql -q -h 127.0.0.1 -U postgres -d copylimit -f internal/engine/postgres/sql/schema.sql
rows=$(cat "$work"/data/*.tsv | wc -l)
start=$(date +%s.%N)
# Two sessions, as build's default --workers on this machine: the big tables split.
psql -q -h 127.0.0.1 -U postgres -d copylimit -c "COPY stock FROM '$work/data/stock.tsv'" -c "COPY item FROM '$work/data/item.tsv'" &
for t in order_line customer history orders new_order district warehouse; do
  echo "COPY $t FROM '$work/data/$t.tsv';"
done | psql -q -h 127.0.0.1 -U postgres -d copylimit
wait
el=$(echo "$(date +%s.%N) - $start" | bc)
echo "   COPY from pre-generated files (2 sessions, no keys): $rows rows in $el s = $(echo "$rows / $el" | bc) rows/s"

echo "== 2. NOPM by users and mode (4 warehouses, ramp 5s, timed ${DUR}s)"
printf "   %-11s %5s %10s %10s %10s %10s %12s\n" mode users nopm_db nopm_client tpm_db tpm_client client_us/txn
for mode in procedures sql; do
  for u in 1 2 4 8; do
    "$SB" run --dsn "$DSN" --users "$u" --ramp 5s --duration "${DUR}s" --mode "$mode" --json "$work/r.json" >/dev/null
    printf "   %-11s %5s %10.0f %10.0f %10.0f %10.0f %12.1f\n" "$mode" "$u" \
      "$(json "$work/r.json" "r['nopm_db']")" "$(json "$work/r.json" "r['nopm_client']")" \
      "$(json "$work/r.json" "r['tpm_db']")" "$(json "$work/r.json" "r['tpm_client']")" \
      "$(json "$work/r.json" "r['client_cpu']['us_per_txn']")"
  done
done

echo "== 2b. reference: pgbench (C, libpq, one event loop) calling the same functions, 4 clients"
cat >"$work/calls.sql" <<'SQL'
\set w random(1, 4)
\set d random(1, 10)
\set c random(1, 3000)
SELECT storbench_payment(:w, :d, :w, :d, :c, false, '', 1234);
SELECT storbench_stock_level(:w, :d, 15);
SQL
/usr/bin/time -f "%U %S" -o "$work/pgbench.cpu" "$PG_BIN/pgbench" -h 127.0.0.1 -p "$PGPORT" -U postgres -n -M prepared \
  -c 4 -j 1 -T "$DUR" -f "$work/calls.sql" tpcc >"$work/pgbench.out" 2>&1
calls=$(awk '/actually processed/ {print $NF * 2}' "$work/pgbench.out")
echo "   pgbench: $calls calls, $(awk -v n="$calls" '{printf "%.1f", ($1 + $2) * 1e6 / n}' "$work/pgbench.cpu") µs of client CPU per call"

echo "== 3. client CPU per transaction (µs; 3 runs of ramp 5s + ${DUR}s each; load = 1-minute load average before each run)"
UNIX_DSN="postgres://postgres@/tpcc?host=$PGDATA_DIR&port=$PGPORT&sslmode=disable"
printf "   %-11s %5s %-6s %8s %8s   %-22s %s\n" mode users socket min median "runs" "load"
for mode in procedures sql; do
  for u in 4 64; do
    for sock in tcp unix; do
      dsn=$DSN; [ "$sock" = unix ] && dsn=$UNIX_DSN
      runs=() loads=()
      for i in 1 2 3; do
        loads+=("$(cut -d' ' -f1 /proc/loadavg)")
        "$SB" run --dsn "$dsn" --users "$u" --ramp 5s --duration "${DUR}s" --mode "$mode" --no-metrics --json "$work/c.json" >/dev/null
        runs+=("$(json "$work/c.json" "'%.1f' % r['client_cpu']['us_per_txn']")")
      done
      python3 -c 'import sys, statistics as st
mode, u, sock, runs, loads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(), sys.argv[5]
v = sorted(map(float, runs))
print("   %-11s %5s %-6s %8.1f %8.1f   %-22s %s" % (mode, u, sock, v[0], st.median(v), " ".join(runs), loads))' \
        "$mode" "$u" "$sock" "${runs[*]}" "${loads[*]}"
    done
  done
done

echo "== 3b. the floor: client CPU of one bare request/reply round trip (bench/wirefloor, 4 connections, ${DUR}s; µs per call)"
echo "   sleep 0.0005: the server sleeps 0.5 ms per call, so the client sleeps between replies as in a run; sleep 0: SELECT 1"
printf "   %-10s %-6s %-7s %8s %8s   %s\n" mode socket sleep min median runs
for sleep in 0.0005 0; do
  for mode in exchange write-read thread; do
    for sock in tcp unix; do
      dsn=$DSN; [ "$sock" = unix ] && dsn=$UNIX_DSN
      runs=()
      for i in 1 2 3; do
        runs+=("$("$work/wirefloor" -dsn "$dsn" -mode "$mode" -sleep "$sleep" -duration "${DUR}s" | sed 's/.*us_per_call=//')")
      done
      python3 -c 'import sys, statistics as st
v = sorted(map(float, sys.argv[4].split()))
print("   %-10s %-6s %-7s %8.1f %8.1f   %s" % (sys.argv[1], sys.argv[2], sys.argv[3], v[0], st.median(v), sys.argv[4]))' \
        "$mode" "$sock" "$sleep" "${runs[*]}"
    done
  done
done

echo "== 4. check wall time, 4 warehouses"
start=$(date +%s.%N)
"$SB" check --dsn "$DSN" | tail -1
echo "   check wall time: $(echo "$(date +%s.%N) - $start" | bc) s"

echo "== 5. driver memory with 1000 users (procedures mode, ramp 10s, timed 10s)"
/usr/bin/time -f "   max RSS %M KB, %e s wall" "$SB" run --dsn "$DSN" --users 1000 --all-warehouses --ramp 10s --duration 10s --json "$work/r1000.json" >/dev/null
echo "   1000 users: nopm_db $(json "$work/r1000.json" "round(r['nopm_db'])"), errors $(json "$work/r1000.json" "r['errors_by_kind']")"
