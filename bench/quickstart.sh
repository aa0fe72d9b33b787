#!/usr/bin/env bash
# The main job in one command: a throwaway PostgreSQL (started and removed here), a
# 2-warehouse TPC-C build, a 4-user run of 10 s in procedures mode, and the
# consistency check. Usage: bash bench/quickstart.sh [extra storbench run flags]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
work=$(mktemp -d /tmp/storbench-quickstart.XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
pg_start "$work/pgdata" "shared_buffers = 256MB"
"$work/storbench" build --dsn "$DSN" --warehouses 2
"$work/storbench" run --dsn "$DSN" --users 4 --ramp 2s --duration 10s --json "$work/result.json" "$@"
"$work/storbench" check --dsn "$DSN"
