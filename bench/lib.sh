# Shared by bench/*.sh: a throwaway PostgreSQL on a free loopback port, run as the
# postgres user when we are root (initdb refuses root). Source it, then:
#   pg_start DIR [extra postgresql.conf lines...]   sets PGPORT and DSN
#   pg_stop
#   sampler_cpu LABEL SHORT LONG FLAGS...   the marginal CPU of `$SB run --metrics-only`
PG_BIN=${STORBENCH_PG_BINDIR:-$(pg_config --bindir)}

as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

pg_start() {
  PGDATA_DIR=$1; shift
  mkdir -p "$PGDATA_DIR"
  if [ "$(id -u)" = 0 ]; then chown postgres "$PGDATA_DIR"; chmod o+x "$(dirname "$PGDATA_DIR")"; fi
  as_pg "$PG_BIN/initdb -D $PGDATA_DIR -U postgres --auth=trust -E UTF8 --locale=C --no-sync" >/dev/null
  PGPORT=$(free_port)
  {
    echo "port = $PGPORT"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$PGDATA_DIR'"
    for line in "$@"; do echo "$line"; done
  } >>"$PGDATA_DIR/postgresql.conf"
  as_pg "$PG_BIN/pg_ctl -D $PGDATA_DIR -l $PGDATA_DIR/server.log -w -t 60 start" >/dev/null
  DSN="postgres://postgres@127.0.0.1:$PGPORT/tpcc?sslmode=disable"
  psql -q -h 127.0.0.1 -p "$PGPORT" -U postgres -c "CREATE DATABASE tpcc"
  export PGPORT DSN
}

pg_stop() {
  [ -n "${PGDATA_DIR:-}" ] && as_pg "$PG_BIN/pg_ctl -D $PGDATA_DIR -m fast -w stop" >/dev/null || true
}

# sampler_cpu LABEL SHORT LONG FLAGS...: the CPU `$SB run --metrics-only FLAGS`
# (storbench and its children, bpftrace) costs per second of its window, past
# start-up: (CPU of a LONG s run - CPU of a SHORT s run) / (LONG - SHORT), from
# getrusage of the children, so start-up is not spread over the run.
sampler_cpu() {
  local label=$1 short=$2 long=$3 a b
  shift 3
  a=$(cpu_seconds "$SB" run --metrics-only --duration "${short}s" --metrics-interval 1s "$@")
  b=$(cpu_seconds "$SB" run --metrics-only --duration "${long}s" --metrics-interval 1s "$@")
  python3 -c "
a, b, d = $a, $b, $long - $short
print(f'$label: {100*(b-a)/d:.3f}% of one core (marginal; {b:.2f} s CPU over a $long s run incl. start-up)')"
}

# cpu_seconds CMD...: the CPU seconds CMD and its children used.
cpu_seconds() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.4f}")
PY
}
