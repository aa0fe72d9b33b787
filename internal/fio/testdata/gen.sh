#!/bin/sh
# Regenerates the fio fixtures in this directory by running the real fio
# (fixtures in the repo were made with fio-3.33, Debian). Run from anywhere;
# needs O_DIRECT + libaio on the filesystem holding this directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp="$here/tmp-gen"
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

common="--filename=file --size=16m --bs=4k --ioengine=libaio --iodepth=4 --direct=1 --runtime=2 --time_based"

# shellcheck disable=SC2086
fio --name=randread $common --rw=randread --output-format=json+ >"$here/randread.json"
# shellcheck disable=SC2086
fio --name=randwrite $common --rw=randwrite --output-format=json+ >"$here/randwrite.json"
# shellcheck disable=SC2086
fio --name=randrw $common --rw=randrw --rwmixread=70 --numjobs=2 --group_reporting \
	--write_iops_log=randrw --write_bw_log=randrw --write_lat_log=randrw --log_avg_msec=1000 \
	--output-format=json+ >"$here/randrw.json"
cp randrw_*.log "$here/"
# Without group_reporting: one entry per job, usr_cpu/sys_cpu per job.
# shellcheck disable=SC2086
fio --name=ungrouped $common --rw=randread --numjobs=4 --output-format=json+ >"$here/ungrouped.json"

cat >stonewall.fio <<JOB
[global]
filename=file
size=16m
bs=64k
ioengine=libaio
iodepth=4
direct=1
runtime=2
time_based
group_reporting

[seqread]
rw=read

[seqwrite]
stonewall
rw=write
numjobs=2
JOB
fio --output-format=json+ stonewall.fio >"$here/stonewall.json"

# Rate-limited so that IOPS is flat and the criterion is met (fio stops early).
fio --name=steady --filename=file --size=16m --bs=4k --rw=randread --ioengine=psync \
	--rate_iops=2000 --steadystate=iops_slope:0.3% --ss_dur=2 --ss_ramp=1 \
	--runtime=6 --time_based --output-format=json+ >"$here/steady.json"
# Unthrottled buffered reads: IOPS wanders, the criterion is not met in 6 s.
fio --name=unsteady --filename=file --size=16m --bs=4k --rw=randread --ioengine=psync \
	--steadystate=iops_slope:0.3% --ss_dur=2 --ss_ramp=1 \
	--runtime=6 --time_based --output-format=json+ >"$here/steady_unattained.json"

# ss_dur of 1 s: one interval, so fio prints "slope" : -nan (not JSON) and
# still "attained" : 1.
fio --name=steadynan --filename=file --size=16m --bs=4k --rw=randread --ioengine=psync \
	--rate_iops=2000 --steadystate=iops_slope:0.3% --ss_dur=1 \
	--runtime=2 --time_based --output-format=json+ >"$here/steady_nan.json"

# fio prints this note on stderr; with both streams captured together it
# precedes the JSON, as it does for a caller that merges them.
fio --name=note --filename=file --size=16m --bs=4k --rw=randread --ioengine=psync \
	--iodepth=4 --runtime=2 --time_based --output-format=json+ >"$here/note.json" 2>&1

# Keep fixtures small: drop the clat histogram ("bins") from any report over ~200 KB.
for f in "$here"/*.json; do
	if [ "$(wc -c <"$f")" -gt 200000 ]; then
		python3 - "$f" <<'PY'
import json, re, sys
path = sys.argv[1]
raw = open(path).read()
start = re.search(r"^\{", raw, re.M).start()
head, doc = raw[:start], json.loads(raw[start:])
for job in doc["jobs"]:
    for side in ("read", "write", "trim", "sync"):
        job.get(side, {}).get("clat_ns", {}).pop("bins", None)
open(path, "w").write(head + json.dumps(doc, indent=2) + "\n")
PY
		echo "stripped bins from $f"
	fi
done
