#!/usr/bin/env bash
# How long `storbench quick` takes, the figure README.md states: a fresh --path under
# the directory given (default /var/tmp, on the disk to measure), timed whole from the
# command's start to its report, RUNS times (default 1). Prints each run's wall time.
# cmd/storbench's TestReadmeQuickTime holds the README's figure to the floor no machine
# goes below: the time quick's study spends in timed windows (ramps, windows, fio).
# Usage: bash bench/quick.sh [parent directory, default /var/tmp] [runs, default 1]
set -euo pipefail
cd "$(dirname "$0")/.."
parent=${1:-/var/tmp}
runs=${2:-1}
work=$(mktemp -d /tmp/storbench-quick-bench.XXXXXX)
path=$(mktemp -d "$parent/storbench-quick-bench.XXXXXX")
# quick's instance first (its server runs on in PATH/run/pg after a failure or Ctrl-C),
# with the binary it needs; then the directories.
trap '"$work/storbench" study clean "$path/run/results" >/dev/null 2>&1 || true; rm -rf "$path" "$work"' EXIT
go build -o "$work/storbench" ./cmd/storbench
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(df -T "$parent" | awk 'NR==2 {print $2 " on " $1}'); $(pg_config --version 2>/dev/null || echo 'no PostgreSQL'); $(fio --version 2>/dev/null || echo 'no fio')"
for i in $(seq "$runs"); do
  rm -rf "$path/run"
  start=$(date +%s.%N)
  "$work/storbench" quick --path "$path/run" >"$work/quick.log"
  end=$(date +%s.%N)
  printf 'run %d: %.0f s wall (storbench quick --path %s)\n' "$i" "$(echo "$end - $start" | bc)" "$path/run"
done
grep -E '^study ' "$work/quick.log" || true
