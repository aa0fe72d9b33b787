#!/usr/bin/env bash
# The spec's inputs beside HammerDB's (issue 18): one managed PostgreSQL whose memory
# limit is about a quarter of the data, so that the skew of the ids shows in the buffer
# hit ratio and the disk reads, one build, then `run --inputs spec` and
# `run --inputs hammerdb` with the same users, ramp and window. Prints NOPM and TPM
# (database), the NOPM HammerDB would show, buffer hit %, disk reads/s and client CPU
# per transaction. The instance lives in a scratch directory beside the checkout, on
# the checkout's disk: the system temp dir may be a tmpfs, which would measure memory.
# Usage: bash bench/inputs.sh   (environment, with defaults: WAREHOUSES=4 USERS=4
#   MEMORY=104MB RAMP=10 DURATION=60; 4 warehouses are about 420 MB, 4x 104MB)
set -euo pipefail
cd "$(dirname "$0")/.."
warehouses=${WAREHOUSES:-4}
users=${USERS:-4}
memory=${MEMORY:-104MB}
ramp=${RAMP:-10}
duration=${DURATION:-60}
work=$(mktemp -d "$PWD/.bench-inputs.XXXXXX")
export STORBENCH_HOME=$work/home
SB=$work/storbench
name=inputs-$$
trap '"$SB" instance destroy --name "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$SB" ./cmd/storbench

"$SB" instance create --path "$work/pg" --name "$name" --memory "$memory" >"$work/create.out"
grep -i "limit" "$work/create.out" || true
# The DSN with its password, in the environment rather than on command lines.
STORBENCH_DSN=$("$SB" instance dsn --name "$name")
export STORBENCH_DSN
echo "== machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); instance --memory $memory on $(df --output=source,fstype "$work" | tail -1)"
"$SB" build --warehouses "$warehouses" | tail -1
pw=${STORBENCH_DSN#*://postgres:}
size=$(PGPASSWORD=${pw%%@*} psql "postgres://postgres@${STORBENCH_DSN#*@}" -Atc "SELECT pg_size_pretty(pg_database_size(current_database()))")
echo "== database $size, $users users, procedures mode, ramp ${ramp}s, timed ${duration}s"

for inputs in spec hammerdb; do
  "$SB" run --users "$users" --ramp "${ramp}s" --duration "${duration}s" \
    --inputs "$inputs" --io-latency off --json "$work/run.$inputs.json" >"$work/out.$inputs"
done

python3 - "$work/run.spec.json" "$work/run.hammerdb.json" <<'PY'
import json, sys
rows = []
for path in sys.argv[1:]:
    r = json.load(open(path))
    s = (r.get("system") or {}).get("summary") or {}
    db = s.get("database") or {}
    reads = sum(d.get("read_iops", 0) for d in s.get("disks") or [])
    hd = r.get("hammerdb_nopm")
    rows.append((r["config"].get("inputs", "spec"), r["nopm_db"], r["tpm_db"],
                 f"{hd:,.0f}" if hd is not None else "-", db.get("buffer_hit_pct"), reads,
                 r["client_cpu"]["us_per_txn"], sum(t["errors"] for t in r["transactions"].values())))
print("| inputs | NOPM (db) | TPM (db) | hammerdb_nopm | buffer hit % | disk reads/s | client CPU µs/txn | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name, nopm, tpm, hd, hit, reads, cpu, errs in rows:
    hit = f"{hit:.2f}" if hit is not None else "-"
    print(f"| {name} | {nopm:,.0f} | {tpm:,.0f} | {hd} | {hit} | {reads:,.0f} | {cpu:.1f} | {errs} |")
PY
