#!/usr/bin/env bash
# Consolidation and the noisy neighbour (issue 7), as an example of the output, not a
# threshold: 4 instances of 1 warehouse and 512MB on one target, 4 users each, a
# baseline with TPC-C on all four, then one instance backing up every 12 s (5 cycles)
# while the other three run TPC-C over the same 60 s window.
# Usage: bash bench/consolidation.sh [target dir, default a dir beside the checkout]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-$PWD/.bench-consolidation}
mkdir -p "$target"
work=$(mktemp -d /tmp/storbench-consolidation-bench.XXXXXX)
# The study removes the instances it made under $target; $target itself only if empty.
trap 'rm -rf "$work"; rmdir "$target" 2>/dev/null || true' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
sed -e "s|path: /mnt/shared/storbench|path: $target/shared|" -e 's|ramp: 30s|ramp: 10s|' -e 's|duration: 2m|duration: 60s|' \
    -e 's|interval: 20s|interval: 12s|' examples/consolidation-noisy-neighbour.yaml >"$work/study.yaml"
"$SB" study run "$work/study.yaml" --results "$work/results" | grep -E '^  '
"$SB" results show "$work/results" 2 | sed -n '2,8p'
