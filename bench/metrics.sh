#!/usr/bin/env bash
# Metrics sampler figures (issue 4): CPU the sampler itself uses at 1 s and 100 ms,
# with and without per-I/O latency tracing (bpftrace, a child process counted here).
# The marginal cost is (CPU of a long run - CPU of a short run) / the difference in
# length, so process start-up and bpftrace's attach are not spread over the run.
# Usage: bash bench/metrics.sh [seconds, default 60]
set -euo pipefail
cd "$(dirname "$0")/.."
long=${1:-60}
short=5
work=$(mktemp -d /tmp/storbench-metrics-bench.XXXXXX)
# The sampled directory is beside the checkout: the system temp dir may be a tmpfs,
# where there is no disk to sample or trace.
disk=$(mktemp -d "$PWD/.bench-metrics.XXXXXX")
trap 'rm -rf "$work" "$disk"' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench

# cpu_seconds CMD...: user + system seconds of CMD and its children.
cpu_seconds() {
  python3 - "$@" <<'EOF'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
EOF
}

measure() { # interval io-latency
  local a b
  a=$(cpu_seconds "$SB" run --metrics-only --duration "${short}s" --metrics-interval "$1" --path "$disk" --io-latency "$2")
  b=$(cpu_seconds "$SB" run --metrics-only --duration "${long}s" --metrics-interval "$1" --path "$disk" --io-latency "$2")
  python3 -c "
a, b, d = $a, $b, $long - $short
print(f'interval $1, io-latency $2: {100*(b-a)/d:.3f}% of one core (marginal; {b:.2f} s CPU over a {$long} s run incl. start-up)')"
}

echo "sampler CPU ($(nproc) cores, $(uname -r)); goal < 0.5% of one core at 1 s"
measure 1s off
measure 100ms off
if [ "$(id -u)" = 0 ] && command -v bpftrace >/dev/null; then
  measure 1s on
  measure 100ms on
else
  echo "per-I/O latency tracing not measured: needs root and bpftrace"
fi
