#!/usr/bin/env bash
# HTML report figures: storbench report on a synthetic results store of a real
# study's size (bench/genstudy: 2 targets × users 1, 2, 4, 8, 16 × 10 repeats = 100
# steps of 600 s timed + 60 s ramp, per-second timelines and system samples, about
# 170 MB of JSON), three runs, each with its wall time, maximum RSS and the HTML's
# size. Goal: under 5 s and an HTML file under 10 MB.
# Usage: bash bench/report.sh [steps, default 100] [seconds per step, default 600]
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-100}
seconds=${2:-600}
if [ ! -x /usr/bin/time ] || ! /usr/bin/time -f '%e' true >/dev/null 2>&1; then
  echo "GNU time (/usr/bin/time) is needed for the maximum RSS: apt-get install -y --no-upgrade time" >&2
  exit 1
fi
work=$(mktemp -d /tmp/storbench-report-bench.XXXXXX)
# The store is beside the checkout (gitignored): the system temp dir may be a tmpfs,
# where 170 MB of JSON would sit in memory beside the process measured.
store=$(mktemp -d "$PWD/.bench-report.XXXXXX")
trap 'rm -rf "$work" "$store"' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
if ! "$SB" report --help >/dev/null 2>&1; then
  echo "this storbench has no report command yet (storbench report RESULTS... -o FILE.html)" >&2
  exit 1
fi

go run ./bench/genstudy -dir "$store" -steps "$steps" -seconds "$seconds"
echo "store: $(du -sm "$store" | cut -f1) MB on disk, $(find "$store/steps" -name '*.json' | wc -l) step files"

out=$work/report.html
echo "storbench report, $steps steps × ${seconds} s ($(nproc) cores, $(uname -r)); goal < 5 s and HTML < 10 MB"
worst_s=0 worst_mb=0
for run in 1 2 3; do
  rm -f "$out"
  /usr/bin/time -f '%e %M' -o "$work/time" "$SB" report "$store" -o "$out" >/dev/null
  read -r wall rss_kb <"$work/time"
  html_bytes=$(stat -c %s "$out")
  awk -v r="$run" -v w="$wall" -v k="$rss_kb" -v b="$html_bytes" \
    'BEGIN { printf "run %d: %.2f s wall, %.0f MB max RSS, HTML %.2f MB\n", r, w, k / 1024, b / 1e6 }'
  worst_s=$(awk -v a="$worst_s" -v b="$wall" 'BEGIN { print (b > a ? b : a) }')
  worst_mb=$(awk -v a="$worst_mb" -v b="$html_bytes" 'BEGIN { m = b / 1e6; print (m > a ? m : a) }')
done
awk -v s="$worst_s" -v m="$worst_mb" 'BEGIN {
  ok = (s < 5 && m < 10)
  printf "slowest %.2f s, largest HTML %.2f MB: goal (< 5 s, < 10 MB) %s\n", s, m, ok ? "met" : "NOT met"
}'
