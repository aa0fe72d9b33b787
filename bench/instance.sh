#!/usr/bin/env bash
# Managed-instance figures (issue 3): time to create and start an instance, backup and
# restore MB/s of a 4-warehouse database, restore from the base image vs a rebuild.
# Usage: bash bench/instance.sh [target dir, default a temp dir on /tmp's disk]
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d /tmp/storbench-instance-bench.XXXXXX)
target=${1:-$work/target}
export STORBENCH_HOME=$work/home
SB=$work/storbench
trap '"$SB" instance destroy --name bench >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$SB" ./cmd/storbench
secs() { python3 -c "import time,sys; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$1"; }

t=$(date +%s.%N)
"$SB" instance create --path "$target" --name bench --memory 2GB >"$work/create.out"
echo "create + start (initdb, settings, cgroup, first start): $(secs "$t") s"
grep -E "limit:|dsn:" "$work/create.out" | sed 's/^/  /'
# The DSN with its password, in the environment rather than on command lines.
STORBENCH_DSN=$("$SB" instance dsn --name bench)
export STORBENCH_DSN

t=$(date +%s.%N)
"$SB" build --warehouses 4 | tail -1
rebuild=$(secs "$t")
echo "build 4 warehouses: $rebuild s"

"$SB" backup --instance bench --to "$work/base"
"$SB" run --users 4 --ramp 2s --duration 10s >/dev/null
t=$(date +%s.%N)
"$SB" restore --instance bench --from "$work/base"
echo "restore from the base image, wall time including stop and start: $(secs "$t") s (rebuild: $rebuild s)"
"$SB" check --all | tail -1
