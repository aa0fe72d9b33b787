#!/usr/bin/env bash
# Resource bounds with many users (issue 10): storbench's max RSS, its per-second timeline
# and how punctual its per-second progress lines are, at 100 and 1000 virtual users
# against a managed PostgreSQL sized for them (max_connections), so the memory per user
# shows. The instance lives in a scratch directory beside the checkout, on the
# checkout's disk: the system temp dir may be a tmpfs, which would measure memory.
# Per-I/O latency is off: bpftrace is a child of storbench, and the kernel reports the
# largest RSS among a process and its reaped children, so bpftrace's would pass for
# storbench's.
# Usage: bash bench/users.sh [warehouses, default 10] [timed seconds, default 30] [ramp seconds, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
warehouses=${1:-10}
duration=${2:-30}
ramp=${3:-10}
work=$(mktemp -d "$PWD/.bench-users.XXXXXX")
export STORBENCH_HOME=$work/home
SB=$work/storbench
trap '"$SB" instance destroy --name users >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$SB" ./cmd/storbench

# 1000 users plus the run's own connections (counters, metrics) and a margin.
"$SB" instance create --path "$work/pg" --name users --max-connections 1020 >"$work/create.out"
# The DSN with its password, in the environment rather than on command lines.
STORBENCH_DSN=$("$SB" instance dsn --name users)
export STORBENCH_DSN
echo "== machine: $(nproc) CPUs, $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); instance on $(df --output=source,fstype "$work" | tail -1)"
"$SB" build --warehouses "$warehouses" | tail -1

# The maximum RSS: GNU time's, else the kernel's rusage of the child read by a wrapper.
if /usr/bin/time -v true >/dev/null 2>&1; then
  measure() { /usr/bin/time -v -o "$1" "${@:2}"; }
else
  measure() {
    python3 -c 'import os,resource,sys; p=os.spawnv(os.P_WAIT,sys.argv[2],sys.argv[2:]); open(sys.argv[1],"w").write("Maximum resident set size (kbytes): %d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p)' "$@"
  }
fi

# Each stdout line gets the time it arrived (storbench writes its progress unbuffered).
stamp() { perl -MTime::HiRes=time -ne 'BEGIN { $| = 1 } printf "%.6f %s", time, $_'; }

report() {
  python3 - "$1" "$2" "$3" "$4" "$ramp" "$duration" <<'PY'
import json, re, sys
users, res, out, rusage, ramp, duration = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(rusage).read()).group(1))
ts = [float(l.split(" ", 1)[0]) for l in open(out) if re.search(r" TPM .* NOPM .* errors ", l)]
gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
p99 = gaps[min(len(gaps) - 1, int(0.99 * len(gaps)))] if gaps else float("nan")
seconds = [s["t"] for s in res["timeline"]]
want = set(range(-ramp + 1, duration + 1))
missing = sorted(want - set(seconds))
dups = sorted({t for t in seconds if seconds.count(t) > 1})
errors = sum(t["errors"] for t in res["transactions"].values())
print(f"   {users:>5} users: max RSS {rss / 1024:.1f} MB")
print(f"          timeline: {len(seconds)} entries for {len(want)} seconds (ramp {ramp} + timed {duration}); missing {missing or 'none'}, repeated {dups or 'none'}")
print(f"          progress lines: {len(ts)}, gap between consecutive lines max {max(gaps):.3f} s, p99 {p99:.3f} s, min {min(gaps):.3f} s (expected 1 s)")
print(f"          NOPM db {res['nopm_db']:.0f}, client {res['nopm_client']:.0f}; TPM db {res['tpm_db']:.0f}, client {res['tpm_client']:.0f}; errors {errors} {res.get('errors_by_kind') or ''}")
for note in res.get("notes") or []:
    print(f"          note: {note}")
PY
}

echo "== storbench run, procedures mode, ramp ${ramp}s, timed ${duration}s, $warehouses warehouses"
for users in 100 1000; do
  measure "$work/rusage.$users" "$SB" run --users "$users" --ramp "${ramp}s" --duration "${duration}s" \
    --io-latency off --json "$work/run.$users.json" | stamp >"$work/out.$users"
  report "$users" "$work/run.$users.json" "$work/out.$users" "$work/rusage.$users"
done
