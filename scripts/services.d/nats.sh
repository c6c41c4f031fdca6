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
  pid_running "$pidfile"
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
    # Debian puts it in /usr/sbin, which a non-root PATH may lack
    bin="$(command -v nats-server || true)"
    [ -z "$bin" ] && [ -x /usr/sbin/nats-server ] && bin=/usr/sbin/nats-server
    if [ -z "$bin" ]; then
      echo "nats-server is not installed although dpkg lists the package (removed but not purged?): apt-get install --reinstall nats-server" >&2
      exit 1
    fi
    mkdir -p "$dir/jetstream"
    rm -f "$pidfile"
    : >"$log"
    # -a binds the client port to loopback only, and the monitoring port with it
    setsid "$bin" -a 127.0.0.1 -p "$port" -m "$monitor" -js -sd "$dir/jetstream" -P "$pidfile" -l "$log" \
      </dev/null >>"$log" 2>&1 &
    server=$!
    # ours answers: alive, its client port open, healthy; or give up at once when it died (a port taken, a bad store dir)
    ready() { kill -0 "$server" 2>/dev/null && port_open "$port" && healthy; }
    wait_until "ready || ! kill -0 $server" 30 "nats-server to answer on 127.0.0.1:$port and http://127.0.0.1:$monitor/healthz" || true
    if ! ready; then
      echo "nats-server did not start:" >&2
      tail -20 "$log" >&2
      kill "$server" 2>/dev/null || true
      exit 1
    fi
    echo "running on nats://127.0.0.1:$port (JetStream on; monitoring http://127.0.0.1:$monitor)"
    ;;
  stop)
    # a clean shutdown writes JetStream state; bounded, then forced
    stop_pidfile "$pidfile" 10 "nats"
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
