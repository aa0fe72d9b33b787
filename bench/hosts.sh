#!/usr/bin/env bash
# Controller CPU per transaction across hosts (issue 11): one storbench process driving
# three PostgreSQL servers on three "hosts" (network namespaces of this machine, each
# with its own node_exporter) at once, against one target on this machine's loopback
# and one remote target, over the timed window only (getrusage of the storbench process
# ÷ transactions completed in the window). Needs root (ip netns). The goal: no more
# than 10% above the local target.
set -euo pipefail
cd "$(dirname "$0")/.."
STORBENCH_BENCH=1 go test -count=1 -timeout 20m -run '^TestControllerCPUAcrossHosts$' -v ./cmd/storbench/ |
  grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS' -e '^ok'
