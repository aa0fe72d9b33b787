#!/usr/bin/env bash
# The same run on each PostgreSQL major (bench/engines -pg-bindirs): 4 warehouses
# built on each, then NOPM, TPM and the client's CPU per transaction in both modes
# at each user count, one table with each server named by its version. The builds
# are Debian's (pg_config) and the bundles of 13, 14, 16, 17 and 18 that
# .ci/pgbundles fetches into $STORBENCH_PG_BUNDLES (default /var/cache/storbench/pg),
# outside the checkout (about 23 MB each, once). The servers
# live in a scratch directory on the checkout's disk, each with the same settings.
# Usage: bash bench/versions.sh [warehouses, default 4] [seconds per step, default 15] [users, default 1,4]
set -euo pipefail
cd "$(dirname "$0")/.."
warehouses=${1:-4}
seconds=${2:-15}
users=${3:-1,4}
bundles=${STORBENCH_PG_BUNDLES:-/var/cache/storbench/pg}
bash .ci/pgbundles 13 14 16 17 18 >/dev/null
own=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
bins=
for major in 13 14 15 16 17 18; do
  if [ "$major" = "$own" ]; then
    bins="$bins,$(pg_config --bindir)"
  elif [ -x "$bundles/$major/bin/postgres" ]; then
    bins="$bins,$bundles/$major/bin"
  fi
done
bins=${bins#,}
scratch=$(mktemp -d "$PWD/.bench-versions.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
go run ./bench/engines -dir "$scratch/run" -engines postgres -pg-bindirs "$bins" \
  -warehouses "$warehouses" -duration "${seconds}s" -users "$users"
