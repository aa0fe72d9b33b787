#!/usr/bin/env bash
# The three engines side by side (bench/engines): load time of 4 warehouses, then NOPM,
# TPM and the client's CPU per transaction at 1, 2, 4 and 8 users, in procedures and
# sql mode where the engine has them, one table. The servers (PostgreSQL, MariaDB) and
# the SQLite file live in a scratch directory beside the checkout, on the checkout's
# disk: the system temp dir may be a tmpfs, which would measure memory.
# Usage: bash bench/engines.sh [warehouses, default 4] [seconds per step, default 10] [users, default 1,2,4,8]
set -euo pipefail
cd "$(dirname "$0")/.."
warehouses=${1:-4}
seconds=${2:-10}
users=${3:-1,2,4,8}
scratch=$(mktemp -d "$PWD/.bench-engines.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
go run ./bench/engines -dir "$scratch/run" -warehouses "$warehouses" -duration "${seconds}s" -users "$users"
