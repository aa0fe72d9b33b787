#!/usr/bin/env bash
# I/O by process role (issue 24): the sampler's own CPU with a PostgreSQL of 200 idle
# connections, at 1 s. `run --metrics-only --dsn` samples every server process's
# /proc/PID/io and stat each interval, beside CPU, memory, the disks and the
# database's counters; the same without --dsn samples no process and no counters.
# The marginal cost is (CPU of a long run - CPU of a short run) / the difference in
# length (getrusage of the children), so start-up is not spread over the run.
# Usage: bash bench/roleio.sh [seconds, default 60] [connections, default 200]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
long=${1:-60}
conns=${2:-200}
short=5
work=$(mktemp -d /tmp/storbench-roleio-bench.XXXXXX)
# The server's directory is beside the checkout: the system temp dir may be a tmpfs.
disk=$(mktemp -d "$PWD/.bench-roleio.XXXXXX")
holders=()
cleanup() {
  for p in "${holders[@]}"; do kill "$p" 2>/dev/null || true; done
  pg_stop
  rm -rf "$work" "$disk"
}
trap cleanup EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
pg_start "$disk/pg" "max_connections = $((conns + 20))" "shared_buffers = 128MB"

# Each connection is a psql waiting on its stdin: an idle backend.
for _ in $(seq "$conns"); do
  sleep $((long + short + 120)) | psql -q -h 127.0.0.1 -p "$PGPORT" -U postgres tpcc >/dev/null &
  holders+=($!)
done
for _ in $(seq 60); do
  n=$(psql -Atq -h 127.0.0.1 -p "$PGPORT" -U postgres -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" postgres)
  [ "$n" -gt "$conns" ] && break
  sleep 1
done
echo "server processes: $(( $(cat /proc/$(head -1 "$disk/pg/postmaster.pid")/task/*/children | wc -w) + 1 )) ($n client backends)"

measure() { # label, then the run's flags
  local label=$1
  shift
  sampler_cpu "$label" "$short" "$long" --io-latency off --path "$disk" "$@"
}

echo "sampler CPU at 1 s ($(nproc) cores, $(uname -r)); goal < 0.5% of one core"
measure "with the server processes by role and its counters (--dsn)" --dsn "$DSN" --json "$work/roles.json"
measure "without (no --dsn: CPU, memory, disks only)"
python3 - "$work/roles.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["system"]
s = r["samples"][len(r["samples"]) // 2]
print("a sample's roles:", ", ".join(f'{x["role"]} {x["tasks"]}' for x in s.get("process_io", [])))
PY
