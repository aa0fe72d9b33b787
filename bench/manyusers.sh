#!/usr/bin/env bash
# Many users, one client (issue 22, item 3): 1,000 and 5,000 virtual users with the
# spec's keying and think times (--keying: about 12.86 NOPM per 10 users) from one
# storbench process, against a throwaway PostgreSQL 15 whose max_connections holds them.
# Prints, per user count: storbench's max RSS, its CPU per transaction (the result's
# client_cpu over the window, and /usr/bin/time's over the whole process), the NOPM
# beside the spec's expectation, errors, the 90th percentiles beside their limits, the
# input audit, the machine's available memory at its lowest (the server's 5,000
# backends) and the load average. First it shows the users' connections are counted
# against the server's limit before any user connects: a run asking one more user than
# the server allows fails at once.
# The server's data lives beside the checkout, on its disk (the system temp dir may be a
# tmpfs). Per-I/O latency is off: bpftrace's RSS would pass for storbench's.
# Usage: bash bench/manyusers.sh [warehouses, default 100] [timed seconds, default 600]
#   [user counts, default "1000 5000"]
#   REUSE=DIR: use the server and database kept by `KEEP=1 bash bench/buildscale.sh`
#   (DIR is its scratch directory; the database is its tpcc<warehouses>) instead of
#   building; the server is restarted with the max_connections needed.
#   METRICS=off: run with --no-metrics, to tell the driver's CPU from the sampler's
#   (which reads every server process's /proc files each second).
#   SERVER_DSN=URL MAX_CONNECTIONS=N: run against that server instead (any engine,
#   already built with the warehouses); PER_BACKEND_MB is then its memory a connection.
#   SHARED_BUFFERS (default 1GB): a smaller pool shrinks each backend's page tables,
#   which is what lets 5,000 backends fit in 24 GB (with PER_BACKEND_MB=4 MARGIN_GB=3).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
warehouses=${1:-100}
duration=${2:-600}
read -r -a counts <<<"${3:-1000 5000}"
ramp=${RAMP:-60}
# Each PostgreSQL backend holds ~3 MB of its own memory and ~1 MB of page tables (the
# shared buffers it touched) in a run like this (measured at 1,000 users, 100
# warehouses, shared_buffers 1GB): a user count whose backends would not fit in the
# machine's available memory, keeping MARGIN_GB for the rest of the machine, is lowered
# to what fits, with a message, rather than have the kernel kill processes.
per_backend_mb=${PER_BACKEND_MB:-5}
avail_mb=$(( $(awk '/MemAvailable/{print $2}' /proc/meminfo) / 1024 - ${MARGIN_GB:-5} * 1024 ))
fit=$(( avail_mb / per_backend_mb / 100 * 100 ))
most=0
for i in "${!counts[@]}"; do
  if [ "${counts[$i]}" -gt "$fit" ]; then
    echo "note: ${counts[$i]} users need ~$(( counts[i] * per_backend_mb / 1024 )) GB of server memory (${per_backend_mb} MB a backend); $(( avail_mb / 1024 )) GB is available beyond a ${MARGIN_GB:-5} GB margin: running $fit users instead"
    counts[$i]=$fit
  fi
  [ "${counts[$i]}" -gt "$most" ] && most=${counts[$i]}
done
# Every user's connection, the run's own two and a margin for psql and the others.
max_conn=$((most + 100))
if [ "$(ulimit -n)" -lt $((most + 200)) ]; then ulimit -n $((most + 1000)); fi

if [ -n "${SERVER_DSN:-}" ]; then
  # A server of any engine already running, whose max_connections is MAX_CONNECTIONS
  # and whose database holds the warehouses (e.g. a managed MariaDB instance).
  max_conn=${MAX_CONNECTIONS:?MAX_CONNECTIONS: the server max_connections}
  DSN=$SERVER_DSN
  work=$(mktemp -d "$PWD/.bench-manyusers.XXXXXX")
  SB=$work/storbench
  go build -o "$SB" ./cmd/storbench
  trap 'rm -rf "$work"' EXIT
elif [ -n "${REUSE:-}" ]; then
  work=$REUSE
  PGDATA_DIR=$work/pg
  echo "max_connections = $max_conn" >>"$PGDATA_DIR/postgresql.conf"
  as_pg "$PG_BIN/pg_ctl -D $PGDATA_DIR -l $PGDATA_DIR/server.log -w -t 120 restart" >/dev/null
  PGPORT=$(sed -n 4p "$PGDATA_DIR/postmaster.pid")
  DSN="postgres://postgres@127.0.0.1:$PGPORT/tpcc$warehouses?sslmode=disable"
  SB=$work/storbench
  go build -o "$SB" ./cmd/storbench
  trap 'pg_stop' EXIT
else
  work=$(mktemp -d "$PWD/.bench-manyusers.XXXXXX")
  chmod 755 "$work"
  SB=$work/storbench
  trap 'pg_stop; rm -rf "$work"' EXIT
  need_gb=$(( (warehouses * 110 + 1023) / 1024 + 4 ))
  free_gb=$(df --output=avail -B1G "$work" | tail -1 | tr -d ' ')
  if [ "$need_gb" -gt "$free_gb" ]; then
    fit=$(( (free_gb - 4) * 1024 / 110 ))
    echo "note: $warehouses warehouses need ~${need_gb} GB, ${free_gb} GB free: building $fit instead (users per warehouse rise accordingly)"
    warehouses=$fit
  fi
  go build -o "$SB" ./cmd/storbench
  pg_start "$work/pg" "shared_buffers = ${SHARED_BUFFERS:-1GB}" "max_wal_size = 4GB" "max_connections = $max_conn"
  "$SB" build --dsn "$DSN" --warehouses "$warehouses" | grep '^built'
fi
echo "== machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); server ${DSN%%:*} max_connections $max_conn, $warehouses warehouses; keying and think times on, procedures mode, ramp ${ramp}s, timed ${duration}s"

# The limit counted up front: one user more than the server allows fails before any connects.
over=$((max_conn + 1))
start=$(date +%s.%N)
if "$SB" run --dsn "$DSN" --users "$over" --keying --duration 10s --no-metrics >"$work/over.out" 2>&1; then
  echo "UNEXPECTED: $over users on max_connections $max_conn ran"
else
  echo "$over users on max_connections $max_conn: exit $?, after $(python3 -c "import time; print(f'{time.time()-$start:.1f}')") s: $(tail -1 "$work/over.out")"
fi

sampler=(--io-latency off)
[ "${METRICS:-on}" = off ] && sampler=(--no-metrics)
echo "sampler: ${sampler[*]}"
for users in "${counts[@]}"; do
  # The machine's available memory, its lowest every 5 s during the run.
  (lowest=$(awk '/MemAvailable/{print $2}' /proc/meminfo)
   echo "$lowest" >"$work/memstart.$users"
   while sleep 5; do
     now=$(awk '/MemAvailable/{print $2}' /proc/meminfo)
     [ "$now" -lt "$lowest" ] && lowest=$now
     echo "$lowest" >"$work/memlow.$users"
   done) &
  watcher=$!
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -f '%M %U %S %e' -o "$work/time.$users" "$SB" run --dsn "$DSN" --users "$users" --keying \
    --ramp "${ramp}s" --duration "${duration}s" "${sampler[@]}" --json "$work/run.$users.json" >"$work/out.$users"
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  kill "$watcher"
  python3 - "$users" "$work/run.$users.json" "$(cat "$work/time.$users")" "$(cat "$work/memstart.$users")" \
    "$(cat "$work/memlow.$users" 2>/dev/null || cat "$work/memstart.$users")" "$load_before" "$load_after" <<'PY'
import json, sys
users, path, tm, mem0, memlow, lb, la = sys.argv[1:]
users = int(users)
r = json.load(open(path))
rss_kb, u, s, wall = map(float, tm.split())
tx = r["transactions"]
count = sum(t["count"] for t in tx.values())
errors = sum(t["errors"] for t in tx.values())
cpu = r["client_cpu"]
print(f"-- {users} users ({users / r['config']['warehouses']:.0f} per warehouse): max RSS {rss_kb / 1024:.0f} MB; load average {lb} before, {la} after")
print(f"   client CPU over the window: {cpu['user_s']:.1f} s user + {cpu['system_s']:.1f} s sys for {count:,} transactions = {cpu['us_per_txn']:.0f} us/txn "
      f"({100 * (cpu['user_s'] + cpu['system_s']) / r['config']['duration_s']:.1f}% of a core)")
print(f"   whole process (connect, ramp, window, summary): {u + s:.1f} s CPU over {wall:.0f} s")
print(f"   NOPM db {r['nopm_db']:.0f}, client {r['nopm_client']:.0f} (spec at {users} users: about {12.86 * users / 10:.0f}); TPM client {r['tpm_client']:.0f}; errors {errors} {r.get('errors_by_kind') or ''}")
print("   p90 ms / limit: " + ", ".join(f"{k} {t['p90_ms']:.0f}/{t['p90_limit_ms']:.0f}" for k, t in tx.items()))
print(f"   machine's available memory: {int(mem0) / 1048576:.1f} GB at start, lowest {int(memlow) / 1048576:.1f} GB")
print("   input audit:")
for a in r.get("audit") or []:
    print(f"     {a['name']:<44} {a['value']:8.2f}{a['unit']:<2} allowed {a['min']:g}-{a['max']:g}  {a['status']:<4} ({a['samples']:,} samples, {a['needed']:,} needed)")
for n in r.get("notes") or []:
    print(f"   note: {n}")
PY
done
