#!/usr/bin/env bash
# What storbench adds around fio (issue 5). Two measures, N rounds:
#  - storbench's own time: wall time of `storbench fio` minus the wall time of the fio
#    processes it ran (a wrapper on PATH times them), so the disk's noise cancels out;
#  - wall time of `storbench fio` vs fio run directly on the exact job file storbench
#    recorded, both starting without a test file (both lay it out), alternating.
# Goal: under 2%.
# Usage: bash bench/fio.sh [target dir on the disk to test, default a dir beside the
# checkout] [runtime, default 20s] [rounds, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-$PWD/.bench-fio}
runtime=${2:-20s}
rounds=${3:-3}
mkdir -p "$target"
work=$(mktemp -d /tmp/storbench-fio-bench.XXXXXX)
trap 'rm -rf "$work" "$target"/direct; rmdir "$target" 2>/dev/null || true' EXIT
SB=$work/storbench
go build -o "$SB" ./cmd/storbench
now() { date +%s.%N; }
real_fio=$(command -v fio)
mkdir "$work/bin"
cat >"$work/bin/fio" <<EOF
#!/bin/sh
s=\$(date +%s.%N); "$real_fio" "\$@"; rc=\$?; echo "\$s \$(date +%s.%N)" >>"$work/fio-times"; exit \$rc
EOF
chmod +x "$work/bin/fio"

profile=hcibench-4k-70r
sum() { python3 -c "import sys; print(sum(float(x) for x in sys.argv[1:]))" "$@"; }
sb_all=() fio_all=() inner_all=()
for i in $(seq "$rounds"); do
  : >"$work/fio-times"
  t=$(now)
  PATH="$work/bin:$PATH" "$SB" fio --path "$target" --profile "$profile" --size 1GB --runtime "$runtime" --json "$work/sb.json" >/dev/null
  sb=$(python3 -c "print($(now) - $t)")
  inner=$(awk '{ s += $2 - $1 } END { print s }' "$work/fio-times")

  # The same job text, its test file and logs moved to a directory of our own.
  mkdir -p "$target/direct"
  python3 - "$work/sb.json" "$target/direct" "$work" >"$work/direct.fio" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))["results"][0]["points"][0]["job_text"]
r = re.sub(r"^filename=.*$", "filename=" + sys.argv[2] + "/direct.dat", r, flags=re.M)
r = re.sub(r"^(write_\w+_log)=.*$", r"\1=" + sys.argv[3] + "/direct", r, flags=re.M)
print(r)
EOF
  t=$(now)
  "$real_fio" --output-format=json+ --output="$work/direct.json" "$work/direct.fio" >/dev/null
  f=$(python3 -c "print($(now) - $t)")
  rm -rf "$target/direct" "$work"/direct_*.log
  printf 'round %d: storbench fio %.2f s (fio inside it %.2f s), fio directly %.2f s\n' "$i" "$sb" "$inner" "$f"
  sb_all+=("$sb") fio_all+=("$f") inner_all+=("$inner")
done
python3 -c "
sb, inner, f = $(sum "${sb_all[@]}"), $(sum "${inner_all[@]}"), $(sum "${fio_all[@]}")
print(f'profile $profile, runtime $runtime, $rounds rounds:')
print(f'  storbench\'s own time around fio: {sb-inner:.2f} s of {sb:.2f} s = {100*(sb-inner)/inner:.2f}% (goal < 2%)')
print(f'  storbench fio vs fio directly (wall, includes the disk\'s run-to-run noise): {sb:.2f} s vs {f:.2f} s = {100*(sb-f)/f:+.2f}%')"
