#!/usr/bin/env bash
# What --listen costs the driver: client CPU per completed transaction (the storbench
# process's own getrusage over the timed window ÷ the transactions completed in it,
# the result's us_per_txn) without and with --listen, the endpoint scraped every
# second, in pairs (their order alternating) on one throwaway PostgreSQL (4
# warehouses, procedures mode, the client sharing the cores with the server). The
# endpoint's own work (setting its figures each second and sample, and each scrape)
# is in the storbench process, so it is in the figure.
# Usage: bash bench/listen.sh [pairs, default 4] [seconds per run, default 20] [users, default 4]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
PAIRS=${1:-4}
DUR=${2:-20}
USERS=${3:-4}
work=$(mktemp -d /tmp/storbench-bench.XXXXXX)
scraper=
trap '[ -n "$scraper" ] && kill "$scraper" 2>/dev/null; pg_stop; rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
SB="$work/storbench"
pg_start "$work/pgdata" "shared_buffers = 1GB" "max_wal_size = 4GB"
"$SB" build --dsn "$DSN" --warehouses 4 >/dev/null
port=$(free_port)
# A scraper a second, as Prometheus at a 1 s scrape interval.
(while :; do curl -s -o /dev/null "http://127.0.0.1:$port/metrics" || true; sleep 1; done) &
scraper=$!
echo "== client µs per transaction, ${USERS} users, ${DUR} s windows, ${PAIRS} pairs (without, with --listen scraped every second)"
printf "   %4s %14s %14s %12s %12s %8s\n" pair without_us with_us without_tpm with_tpm load1
for i in $(seq "$PAIRS"); do
  # Each pair's order alternates: the second run of a pair finds more rows and
  # another point of the checkpoint cycle.
  order="no yes"
  [ $((i % 2)) = 0 ] && order="yes no"
  for listen in $order; do
    args=(run --dsn "$DSN" --users "$USERS" --ramp 3s --duration "${DUR}s" --json "$work/$listen-$i.json" --io-latency off)
    [ "$listen" = yes ] && args+=(--listen "$port")
    "$SB" "${args[@]}" >/dev/null
  done
  python3 - "$work/no-$i.json" "$work/yes-$i.json" "$i" <<'PY'
import json, os, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"   {sys.argv[3]:>4} {a['client_cpu']['us_per_txn']:14.2f} {b['client_cpu']['us_per_txn']:14.2f} {a['tpm_client']:12.0f} {b['tpm_client']:12.0f} {os.getloadavg()[0]:8.2f}")
PY
done
python3 - "$work" "$PAIRS" <<'PY'
import json, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
no = [json.load(open(f"{work}/no-{i}.json"))["client_cpu"]["us_per_txn"] for i in range(1, n + 1)]
yes = [json.load(open(f"{work}/yes-{i}.json"))["client_cpu"]["us_per_txn"] for i in range(1, n + 1)]
d = [y - x for x, y in zip(no, yes)]
print(f"   median without {statistics.median(no):.2f} µs, with {statistics.median(yes):.2f} µs; "
      f"paired difference median {statistics.median(d):+.2f} µs (range {min(d):+.2f} to {max(d):+.2f}); "
      f"the runs without spread {max(no) - min(no):.2f} µs among themselves")
PY
