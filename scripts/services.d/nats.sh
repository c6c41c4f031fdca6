#!/usr/bin/env bash
# NATS with JetStream for the nats connector tests: Debian's nats-server on
# 127.0.0.1:${EDDY_NATS_PORT:-4222}, monitoring (healthz, connz, subsz) on
# 127.0.0.1:${EDDY_NATS_MONITOR_PORT:-8222}, JetStream storage under the
# service dir. No authentication: the tests of the connection options start
# nats-servers of their own on ephemeral ports (this binary), with a CA and
# certificates they make with openssl, which is installed here for them.
#
#   nats.sh start | stop | status
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

port="${EDDY_NATS_PORT:-4222}"
monitor="${EDDY_NATS_MONITOR_PORT:-8222}"
dir="$(service_dir nats)"
pidfile="$dir/nats.pid"
log="$dir/nats.log"

running() {
  [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

healthy() {
  curl -sf "http://127.0.0.1:$monitor/healthz" >/dev/null
}

case "${1:-}" in
  start)
    if running; then
      echo "already running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
      exit 0
    fi
    apt_install nats-server curl openssl
    if port_open "$port"; then
      echo "something else already listens on 127.0.0.1:$port; stop it or set EDDY_NATS_PORT" >&2
      exit 1
    fi
    mkdir -p "$dir/jetstream"
    rm -f "$pidfile"
    # -a binds the client port to loopback only, and the monitoring port with it
    setsid nats-server -a 127.0.0.1 -p "$port" -m "$monitor" -js -sd "$dir/jetstream" -P "$pidfile" -l "$log" \
      </dev/null >/dev/null 2>&1 &
    wait_until healthy 30 "nats-server to answer http://127.0.0.1:$monitor/healthz" || { tail -20 "$log" >&2; exit 1; }
    echo "running on nats://127.0.0.1:$port (JetStream on; monitoring http://127.0.0.1:$monitor)"
    ;;
  stop)
    if ! running; then
      rm -f "$pidfile"
      echo "not running"
      exit 0
    fi
    pid="$(cat "$pidfile")"
    kill -TERM "$pid"
    # a clean shutdown writes JetStream state; bounded, then forced
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    echo "stopped"
    ;;
  status)
    if running && healthy; then
      echo "running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
    else
      echo "not running"
      exit 1
    fi
    ;;
  *)
    echo "usage: nats.sh start|stop|status" >&2
    exit 2
    ;;
esac
