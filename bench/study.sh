#!/usr/bin/env bash
# Study runner figures (issue 6): a 4-warehouse managed target, users 1, 2, 4 twice,
# ramp 2 s, 10 s timed. Per step: the time spent outside ramp + timed window, with
# and without the restore of the base image that precedes each step; and the restore
# time itself.
# Usage: bash bench/study.sh [target dir, default a dir beside the checkout]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-$PWD/.bench-study}
mkdir -p "$target"
work=$(mktemp -d /tmp/storbench-study-bench.XXXXXX)
# The study destroys the instance it made in $target/pg; $target itself is removed only
# when empty (it may be the user's).
trap 'rm -rf "$work"; rmdir "$target" 2>/dev/null || true' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
cat >"$work/study.yaml" <<EOF
name: bench
targets:
  - name: t
    path: $target/pg
workload:
  warehouses: 4
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2, 4]
    ramp: 2s
    duration: 10s
    repeats: 2
EOF
start=$(date +%s.%N)
"$SB" study run "$work/study.yaml" --results "$work/results" >"$work/log"
total=$(python3 -c "import time; print(time.time() - $start)")
python3 - "$work/results" "$total" <<'EOF'
import glob, json, sys
from datetime import datetime
def ts(s): return datetime.fromisoformat(s.replace("Z", "+00:00"))
steps = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/steps/*.json"))]
n = len(steps)
over = before = after = restore = 0.0
lo, hi = 1e9, 0.0
for s in steps:
    wall = (ts(s["ended"]) - ts(s["started"])).total_seconds()
    ramp = s["step"]["ramp"] / 1e9
    over += wall - ramp - s["step"]["duration"] / 1e9
    r = s.get("restore_s", 0)
    restore += r
    lo, hi = min(lo, r), max(hi, r)
    before += (ts(s["run"]["start"]) - ts(s["started"])).total_seconds() - ramp - r
    after += (ts(s["ended"]) - ts(s["run"]["end"])).total_seconds()
print(f"{n} steps, study wall time {float(sys.argv[2]):.1f} s (build and base image of 4 warehouses included)")
print(f"per step outside ramp + timed window: {over/n:.2f} s mean (restore included)")
print(f"  restoring the base image: {restore/n:.2f} s mean ({lo:.2f}-{hi:.2f}; the first step after the build needs none)")
print(f"  runner overhead without the restore: {(over-restore)/n:.2f} s mean: {before/n:.2f} s before the ramp (connect, metrics and tracer start, users), {after/n:.2f} s after the window (users finish, last sample, result stored)")
EOF
