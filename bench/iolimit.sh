#!/usr/bin/env bash
# How closely an I/O limit (instance create --io-limit, a study's io_limit) holds a
# process to its figures: for each limit, a managed instance is created with it, and
# fio runs inside that instance's cgroup, 4 KiB random reads then random writes,
# O_DIRECT, 16 deep, on the instance's disk. Prints measured IOPS against the limit.
# Usage: sudo bash bench/iolimit.sh [seconds per run, default 30] [limits, default "500 1000 3000"]
set -euo pipefail
cd "$(dirname "$0")/.."
runtime=${1:-30}
limits=${2:-500 1000 3000}
work=$(mktemp -d /tmp/storbench-iolimit-bench.XXXXXX)
export STORBENCH_HOME=$work/home
SB=$work/storbench
names=()
cleanup() {
  for n in "${names[@]}"; do "$SB" instance destroy --name "$n" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
go build -o "$SB" ./cmd/storbench

# The instance's group: v1 keeps blkio in a hierarchy of its own, v2 has one.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
  version=v2; groups=/sys/fs/cgroup/storbench
else
  version=v1; groups=/sys/fs/cgroup/blkio/storbench
fi
echo "cgroup $version ($(stat -fc %T /sys/fs/cgroup) at /sys/fs/cgroup), kernel $(uname -r), fio $(fio --version)"
mkdir -p "$work/fio"
echo "disk of the test: $(df --output=source "$work/fio" | tail -1), ${runtime}s per run, 4 KiB, iodepth 16, libaio, direct"
printf '%-8s %12s %8s %12s %8s\n' limit randread "of limit" randwrite "of limit"
for limit in $limits; do
  name=iobench$limit-$$
  names+=("$name")
  "$SB" instance create --path "$work/t$limit" --name "$name" --io-limit "riops=$limit,wiops=$limit" >"$work/create.out"
  group=$(ls -d "$groups/$name"-* | head -1)
  iops=()
  for rw in randread randwrite; do
    # The subshell joins the instance's group, then becomes fio: fio's I/O is charged there.
    out=$(sh -c "echo \$\$ >$group/cgroup.procs && exec fio --name=$rw --filename=$work/fio/file --size=256M --rw=$rw --bs=4k \
      --direct=1 --ioengine=libaio --iodepth=16 --time_based --runtime=$runtime --output-format=json")
    iops+=("$(python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print(round(j["read"]["iops"]+j["write"]["iops"]))' <<<"$out")")
  done
  printf '%-8s %12s %7s%% %12s %7s%%\n' "$limit" "${iops[0]}" "$(( iops[0] * 100 / limit ))" "${iops[1]}" "$(( iops[1] * 100 / limit ))"
  "$SB" instance destroy --name "$name" >/dev/null
done
grep -i "limit" "$work/create.out" | sed 's/^/last instance: /' || true
