#!/usr/bin/env bash
# The README's picture of a report (docs/report.png), from a real run: a small study
# of two managed PostgreSQL targets on this machine's disk (one limited to one CPU
# and 256MB), 1 warehouse, with a user sweep, memory and CPU variants, backups and a
# noisy neighbour, 30 s windows (the shortest the report's findings name a winner by); then storbench report, and headless Chromium
# (network blocked, as internal/report/chromium_test.go opens reports) screenshots the
# top of the page at 1280 px. Takes about fifteen minutes.
# Usage: bash bench/reportshot.sh [PNG, default docs/report.png] [directory to keep the results store in]
set -euo pipefail
cd "$(dirname "$0")/.."
png=$(realpath -m "${1:-docs/report.png}")
keep=${2:-}
# The results are copied into a new directory only: nothing of the user's is overwritten.
if [ -n "$keep" ] && [ -e "$keep" ]; then
  echo "$keep exists: give a directory that does not exist yet to keep the results in" >&2
  exit 2
fi
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chromium" ]; then
  echo "no Chromium in PATH: apt-get install -y --no-upgrade chromium" >&2
  exit 1
fi
# The targets are beside the checkout (gitignored .bench-*): fio and the managed
# instances refuse a tmpfs, which the system temp dir may be.
target=$(mktemp -d "$PWD/.bench-reportshot.XXXXXX")
work=$(mktemp -d /tmp/storbench-reportshot.XXXXXX)
trap 'rm -rf "$work" "$target"' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
cat >"$work/study.yaml" <<EOF
name: two-targets
description: two PostgreSQL targets on one disk, the second limited to one CPU and 256MB; 1 warehouse, 30 s windows
targets:
  - name: fast
    path: $target/fast
  - name: slow
    path: $target/slow
    cpus: "0"
    memory: 256MB
workload:
  warehouses: 1
experiments:
  - name: sweep
    kind: user-sweep
    users: [1, 2, 4]
    ramp: 2s
    duration: 30s
  - name: memory
    kind: memory-sweep
    memory: [192MB, 512MB]
    users: [2]
    ramp: 2s
    duration: 30s
  - name: cpus
    kind: cpu-sweep
    cpus: ["0", "0-1"]
    users: [2]
    ramp: 2s
    duration: 30s
  - name: profiles
    kind: storage-profiles
    profiles: [hcibench-4k-70r]
    size: 32MB
    runtime: 3s
  - name: backup
    kind: backup-restore
    cycles: 2
  - name: noisy
    kind: consolidation
    targets: [fast]
    instances: 2
    instance_memory: 128MB
    users: 1
    ramp: 1s
    duration: 30s
    baseline: true
    noisy: {instances: 1, interval: 3s, cycles: 2}
EOF
"$SB" study run "$work/study.yaml" --results "$target/results" >"$work/log" 2>&1 || { tail -20 "$work/log" >&2; exit 1; }
"$SB" report "$target/results" -o "$work/report.html"
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  # The results alone: the base images and backups stay behind.
  cp -r "$target/results/"{.storbench-study,study.yaml,plan.json,environment.json,steps} "$keep/"
fi
# A fresh profile, no network (every name fails to resolve, every request goes to a
# closed port), the page's own scripts run before the shot.
"$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
  --no-first-run --no-default-browser-check --disable-background-networking --disable-component-update \
  --user-data-dir="$work/profile" --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server=http://127.0.0.1:9 \
  --window-size=1280,1600 --virtual-time-budget=5000 --screenshot="$png" "file://$work/report.html" \
  >"$work/chromium.log" 2>&1 || { tail -20 "$work/chromium.log" >&2; exit 1; }
echo "$png: $(stat -c %s "$png") bytes, the top of the report of $(ls "$target/results/steps" | wc -l) steps"
