#!/usr/bin/env bash
# A TPC-C io-sweep end to end (issue 23): one managed target, 1 warehouse, users 1
# and 4, the same instance under three I/O limits (reads and writes each 500, 1000,
# 3000 IOPS), each from the base image; then the HTML report. Prints each step's
# figures and the throttle it recorded, and what the report says of the limits.
# Usage: sudo bash bench/iosweep.sh [report file, default: not kept]
set -euo pipefail
cd "$(dirname "$0")/.."
target=$PWD/.bench-iosweep
mkdir -p "$target"
work=$(mktemp -d /tmp/storbench-iosweep-bench.XXXXXX)
trap 'rm -rf "$work"; rmdir "$target" 2>/dev/null || true' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
cat >"$work/study.yaml" <<EOF2
name: iosweep-bench
targets:
  - name: t
    path: $target/pg
workload:
  warehouses: 1
experiments:
  - name: io
    kind: io-sweep
    io_limits: ["riops=500,wiops=500", "riops=1000,wiops=1000", "riops=3000,wiops=3000"]
    users: [1, 4]
    ramp: 2s
    duration: 10s
metrics:
  io_latency: "off"
EOF2
start=$(date +%s)
"$SB" study run "$work/study.yaml" --results "$work/results" >"$work/log"
echo "study: $(( $(date +%s) - start )) s wall"
python3 - "$work/results" <<'EOF2'
import glob, json, sys
print(f"{'step':46} {'NOPM':>7} {'data disk r/s':>13} {'w/s':>7}  throttle")
for f in sorted(glob.glob(sys.argv[1] + "/steps/*.json")):
    s = json.load(open(f))
    run, th = s["run"], s.get("io_throttle") or {}
    disks = ((run.get("system") or {}).get("summary") or {}).get("disks") or [{}]
    d = next((d for d in disks if "data" in (d.get("roles") or [])), disks[0])
    print(f"{s['step']['id']:46} {run['nopm_db']:7.0f} {d.get('read_iops', 0):13.0f} {d.get('write_iops', 0):7.0f}  "
          f"cgroup v{th.get('cgroup')} disk {th.get('device')}")
EOF2
"$SB" report "$work/results" -o "$work/report.html" >/dev/null
python3 - "$work/report.html" <<'EOF2'
import re, sys, html
text = html.unescape(re.sub(r"<[^>]+>", " ", open(sys.argv[1]).read()))
for want in ["I/O limits", "PARTIAL EMULATION", "t/io/io=riops=500,wiops=500", "t/io/io=riops=3000,wiops=3000"]:
    print(f"report {'shows' if want in text else 'LACKS'}: {want}")
EOF2
if [ -n "${1:-}" ]; then cp "$work/report.html" "$1"; echo "report: $1"; fi
