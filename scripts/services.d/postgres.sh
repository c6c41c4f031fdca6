#!/usr/bin/env bash
# PostgreSQL for the postgres connector tests: Debian's server, a throwaway
# cluster of our own (initdb --auth=trust) on 127.0.0.1:${EDDY_POSTGRES_PORT:-5432},
# database postgres, user postgres, no password. Runs as user postgres
# (initdb refuses root); the socket lives in the data dir, fsync is off (test
# data only). Debian's own `main` cluster is left alone and never started;
# when this script installs the package, it asks Debian not to create one.
#
#   postgres.sh start | stop | status
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

port="${EDDY_POSTGRES_PORT:-5432}"
dir="$(service_dir postgres)"
data="$dir/data"
log="$dir/postgres.log"

# The newest Debian server binaries (/usr/lib/postgresql/<version>/bin).
bindir() {
  local v
  v="$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1)"
  [ -n "$v" ] && [ -x "/usr/lib/postgresql/$v/bin/pg_ctl" ] && echo "/usr/lib/postgresql/$v/bin"
}

as_postgres() { runuser -u postgres -- "$@"; }

running() {
  local bin
  bin="$(bindir)" || return 1
  [ -f "$data/PG_VERSION" ] && as_postgres "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1
}

case "${1:-}" in
  start)
    if running; then
      echo "already running on 127.0.0.1:$port"
      exit 0
    fi
    if ! dpkg -s postgresql >/dev/null 2>&1; then
      # a fresh install: Debian's package would create (and, where services may
      # start, run) its own `main` cluster on 5432; ours is the only one needed
      mkdir -p /etc/postgresql-common/createcluster.d
      echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/eddy-services.conf
    fi
    apt_install postgresql
    bin="$(bindir)" || { echo "no PostgreSQL server binaries under /usr/lib/postgresql" >&2; exit 1; }
    if port_open "$port"; then
      echo "something else already listens on 127.0.0.1:$port (Debian's main cluster?); stop it or set EDDY_POSTGRES_PORT" >&2
      exit 1
    fi
    # the postgres user must be able to reach its data dir under $EDDY_SERVICES_DIR
    chmod o+x "$EDDY_SERVICES_DIR" "$dir"
    if [ ! -f "$data/PG_VERSION" ]; then
      rm -rf "$data"
      install -d -o postgres -g postgres -m 700 "$data"
      as_postgres "$bin/initdb" -D "$data" --auth=trust --username=postgres --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    touch "$log" && chown postgres:postgres "$log"
    # pg_ctl -w waits until the server accepts connections; -t bounds that wait
    as_postgres "$bin/pg_ctl" -w -t 60 -D "$data" -l "$log" start \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $data -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null \
      || { tail -20 "$log" >&2; exit 1; }
    wait_until "as_postgres $bin/pg_isready -q -h 127.0.0.1 -p $port -U postgres" 30 "postgres on 127.0.0.1:$port"
    echo "running on 127.0.0.1:$port (user postgres, database postgres, no password)"
    ;;
  stop)
    if ! running; then
      echo "not running"
      exit 0
    fi
    bin="$(bindir)"
    # fast: roll back open transactions, disconnect clients, stop every server process
    as_postgres "$bin/pg_ctl" -w -t 60 -D "$data" stop -m fast >/dev/null
    echo "stopped"
    ;;
  status)
    if running; then
      echo "running on 127.0.0.1:$port"
    else
      echo "not running"
      exit 1
    fi
    ;;
  *)
    echo "usage: $0 start|stop|status" >&2
    exit 2
    ;;
esac
