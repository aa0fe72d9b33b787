#!/usr/bin/env bash
# Build scaling (issue 22, item 2): build 4, 25 and 100 warehouses on a throwaway
# PostgreSQL 15 and print, per size, the rows/s of the load phase, the time of the
# keys/indexes phase, the build's wall time, storbench's max RSS, and where the time
# went: client CPU, server CPU (the postmaster and its children), WAL written
# (pg_stat_wal), the disk's writes and busy time (/proc/diskstats) and the machine's
# idle CPU (/proc/stat), plus the load average beside each figure (the machine may be
# shared). Then `storbench study plan`'s projection beside the measured build.
# The server's data lives beside the checkout, on its disk: the system temp dir may be
# a tmpfs, which would measure memory. A size the disk cannot hold (with its WAL) is
# skipped with a message.
# Usage: bash bench/buildscale.sh [warehouses..., default 4 25 100]
#   KEEP=1: leave the server and the largest database running for bench/manyusers.sh
#   (prints its DSN and the command that stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
sizes=("${@:-4 25 100}")
read -r -a sizes <<<"${sizes[*]}"
work=$(mktemp -d "$PWD/.bench-buildscale.XXXXXX")
chmod 755 "$work"
SB=$work/storbench
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "kept: DSN=$DSN (stop: su postgres -s /bin/sh -c '$PG_BIN/pg_ctl -D $work/pg -m fast stop'; then rm -rf $work)"
    return
  fi
  pg_stop
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$SB" ./cmd/storbench

# Bulk-load settings: checkpoints spaced so that the load is not measured against a
# checkpoint every 1 GB of WAL (the default max_wal_size), I/O timing for pg_stat_wal.
max_wal_gb=8
pg_start "$work/pg" "shared_buffers = 1GB" "max_wal_size = ${max_wal_gb}GB" "checkpoint_timeout = 30min" \
  "track_wal_io_timing = on" "max_connections = 200"
psql -q -h 127.0.0.1 -p "$PGPORT" -U postgres -c "DROP DATABASE tpcc"
dev=$(basename "$(df --output=source "$work" | tail -1)")
pm=$(head -1 "$work/pg/postmaster.pid")
echo "== machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); server on $dev ($(df --output=fstype "$work" | tail -1)), shared_buffers 1GB, max_wal_size ${max_wal_gb}GB; load workers: storbench's default ($(nproc), one per CPU)"

# server_cpu: CPU seconds of the postmaster, its reaped children and its live ones.
server_cpu() {
  python3 - "$pm" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
pm = sys.argv[1]
def stat(pid):
    s = open(f"/proc/{pid}/stat").read()
    return s[s.rindex(")") + 2:].split()
f = stat(pm)
total = sum(int(x) for x in f[11:15])  # utime stime cutime cstime
for pid in os.listdir("/proc"):
    if pid.isdigit() and pid != pm:
        try:
            g = stat(pid)
        except OSError:
            continue
        if g[1] == pm:
            total += int(g[11]) + int(g[12])
print(total / hz)
PY
}
# counters: server CPU, WAL bytes/writes/syncs/write ms/sync ms, disk write IOs,
# sectors written, ms busy, machine CPU busy and total jiffies.
counters() {
  local wal
  wal=$(psql -qAt -F ' ' -h 127.0.0.1 -p "$PGPORT" -U postgres -d postgres \
    -c "SELECT wal_bytes, wal_write, wal_sync, wal_write_time, wal_sync_time FROM pg_stat_wal")
  echo "$(server_cpu) $wal $(awk -v d="$dev" '$3 == d {print $8, $10, $13}' /proc/diskstats) $(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"
}

largest=
for w in "${sizes[@]}"; do
  # A built warehouse is ~100 MB in PostgreSQL; the WAL may reach max_wal_size meanwhile.
  need_gb=$(( (w * 110 + 1023) / 1024 + max_wal_gb + 2 ))
  free_gb=$(df --output=avail -B1G "$work" | tail -1 | tr -d ' ')
  if [ "$need_gb" -gt "$free_gb" ]; then
    echo "-- $w warehouses skipped: need ~${need_gb} GB on $dev, ${free_gb} GB free (give fewer warehouses)"
    continue
  fi
  [ -n "$largest" ] && [ "${KEEP:-0}" = 1 ] && psql -q -h 127.0.0.1 -p "$PGPORT" -U postgres -c "DROP DATABASE $largest"
  db=tpcc$w
  psql -q -h 127.0.0.1 -p "$PGPORT" -U postgres -c "CREATE DATABASE $db"
  dsn="postgres://postgres@127.0.0.1:$PGPORT/$db?sslmode=disable"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  before=$(counters)
  /usr/bin/time -f '%M %U %S %e' -o "$work/time.$w" "$SB" build --dsn "$dsn" --warehouses "$w" >"$work/build.$w"
  after=$(counters)
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  python3 - "$w" "$(tail -n +1 "$work/build.$w" | grep '^built')" "$(cat "$work/time.$w")" "$before" "$after" "$load_before" "$load_after" "$(nproc)" <<'PY'
import re, sys
w, built, tm, before, after, lb, la, ncpu = sys.argv[1:]
m = re.search(r"(\d+) rows loaded in ([\d.]+)s \((\d+) rows/s\).* in ([\d.]+)s, total ([\d.]+)s", built)
rows, load_s, rps, index_s, total_s = int(m[1]), float(m[2]), int(m[3]), float(m[4]), float(m[5])
rss_kb, cu, cs, wall = tm.split()
b, a = [list(map(float, x.split())) for x in (before, after)]
d = [y - x for x, y in zip(b, a)]
srv, walb, walw, wals, walwt, walst, dio, dsec, dbusy, busy, tot = d
hz_total = tot  # jiffies over all CPUs
print(f"-- {w} warehouses: {rows:,} rows; load {load_s:.1f} s at {rps/1e6:.2f} M rows/s; keys/indexes/finish {index_s:.1f} s; build {total_s:.1f} s (wall {float(wall):.1f} s)")
print(f"   storbench: max RSS {int(rss_kb)/1024:.0f} MB, CPU {float(cu)+float(cs):.1f} s ({cu} user, {cs} sys) = {100*(float(cu)+float(cs))/float(wall):.0f}% of a core")
print(f"   server:    CPU {srv:.1f} s = {100*srv/float(wall):.0f}% of a core; WAL {walb/1e9:.2f} GB ({walb/1e6/float(wall):.0f} MB/s), {int(walw):,} writes, {int(wals):,} syncs ({walwt/1000:.1f} s writing, {walst/1000:.1f} s syncing)")
print(f"   disk:      {dsec*512/1e9:.2f} GB written in {int(dio):,} IOs ({dsec*512/1e6/float(wall):.0f} MB/s), busy {100*dbusy/1000/float(wall):.0f}% of the wall time")
print(f"   machine:   CPUs {100*busy/tot:.0f}% busy over the build (all processes, {ncpu} CPUs); load average {lb} before, {la} after")
PY
  largest=$db
done
[ -n "$largest" ] || exit 0
DSN="postgres://postgres@127.0.0.1:$PGPORT/$largest?sslmode=disable"

# The projection of `storbench study plan` for the largest size built and for 1,200.
for w in ${largest#tpcc} 1200; do
  cat >"$work/plan$w.yaml" <<EOF
name: plan$w
targets:
  - name: t
    kind: external
    dsn: postgres://127.0.0.1:1/x
workload:
  warehouses: $w
experiments:
  - name: e
    kind: user-sweep
    users: [1]
EOF
  est=$("$SB" study plan "$work/plan$w.yaml" 2>&1 | grep -m1 -o '~[0-9hms]*')
  echo "study plan, $w warehouses: build $est"
done
