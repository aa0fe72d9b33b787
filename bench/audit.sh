#!/usr/bin/env bash
# The input audit over a long run (issue 18): a throwaway PostgreSQL, a 4-warehouse
# build, one run with the spec's inputs (the default) long enough for every audited
# share to reach a verdict (the rollback share needs about 89,000 New-Orders), then the
# audit table and the consistency checks. Every row should read PASS.
# Usage: bash bench/audit.sh   (environment, with defaults: WAREHOUSES=4 USERS=4
#   DURATION=600 MODE=procedures INPUTS=spec)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
warehouses=${WAREHOUSES:-4}
users=${USERS:-4}
duration=${DURATION:-600}
mode=${MODE:-procedures}
inputs=${INPUTS:-spec}
work=$(mktemp -d "$PWD/.bench-audit.XXXXXX")
export STORBENCH_HOME=$work/home
trap 'pg_stop; rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
pg_start "$work/pg" "shared_buffers = 256MB" "max_wal_size = 2GB"
"$work/storbench" build --dsn "$DSN" --warehouses "$warehouses" | tail -1
echo "== $users users, mode $mode, inputs $inputs, ramp 10s, timed ${duration}s"
"$work/storbench" run --dsn "$DSN" --users "$users" --mode "$mode" --inputs "$inputs" \
  --ramp 10s --duration "${duration}s" --no-metrics --json "$work/run.json" >"$work/run.out"
grep -E 'TPM +NOPM|database view|client view|^input audit' "$work/run.out"
sed -n '/^input audit/,/^$/{/^input audit/!p}' "$work/run.out"
# 3.3.2.11 holds only before the first Delivery: the run's Deliveries end it.
"$work/storbench" check --dsn "$DSN"
