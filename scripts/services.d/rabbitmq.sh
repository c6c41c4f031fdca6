#!/usr/bin/env bash
# RabbitMQ (Debian's rabbitmq-server) for the amqp connector tests:
# AMQP 0.9.1 on 127.0.0.1:5672, user guest/guest, vhost /.
#
#   rabbitmq.sh start | stop | status
#
# The node runs as user `rabbitmq` (HOME=/var/lib/rabbitmq, where the
# package put the Erlang cookie the CLI tools share), named rabbit@localhost,
# with its config, data, logs and pid file in $EDDY_SERVICES_DIR/rabbitmq.
# Nothing listens beyond loopback: the AMQP listener, epmd
# (ERL_EPMD_ADDRESS) and the Erlang distribution port
# (inet_dist_use_interface) are all bound to 127.0.0.1. No plugins are
# enabled (faster start; the tests need none). apt does not start the
# server; this script does. epmd outlives the node, so `stop` ends it too.
#
# Everything that names or places a node comes from the environment, so a
# test can run a private node beside the shared one (test/helpers/private-service.ts)
# with its own $EDDY_SERVICES_DIR; unset, each has the default in brackets:
#   EDDY_RABBITMQ_PORT       the AMQP listener                    [5672]
#   EDDY_RABBITMQ_NODE       the Erlang node name                  [rabbit@localhost]
#   EDDY_RABBITMQ_EPMD_PORT  the epmd this node registers with     [4369]
#   EDDY_RABBITMQ_DIST_PORT  the node's Erlang distribution port   [AMQP port + 20000]
# A node with an epmd port of its own starts (and stops) that epmd, so it
# never touches the shared node's registration.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/services.d/_lib.sh
source "$here/_lib.sh"

PORT="${EDDY_RABBITMQ_PORT:-5672}"
NODE="${EDDY_RABBITMQ_NODE:-rabbit@localhost}"
EPMD_PORT="${EDDY_RABBITMQ_EPMD_PORT:-4369}"
# RabbitMQ's own default; named, because AMQP port + 20000 is past 65535 for an ephemeral AMQP port
DIST_PORT="${EDDY_RABBITMQ_DIST_PORT:-$((PORT + 20000))}"
dir="$(service_dir rabbitmq)"
pidfile="$dir/rabbitmq.pid"
LOOPBACK_DIST="-kernel inet_dist_use_interface {127,0,0,1}"

# Runs a RabbitMQ program as user rabbitmq with this node's environment.
as_rabbit() {
  runuser -u rabbitmq -- env \
    HOME=/var/lib/rabbitmq \
    RABBITMQ_NODENAME="$NODE" \
    RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" \
    RABBITMQ_LOG_BASE="$dir/log" \
    RABBITMQ_PID_FILE="$pidfile" \
    ERL_EPMD_ADDRESS=127.0.0.1 \
    ERL_EPMD_PORT="$EPMD_PORT" \
    RABBITMQ_DIST_PORT="$DIST_PORT" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="$LOOPBACK_DIST" \
    RABBITMQ_CTL_ERL_ARGS="$LOOPBACK_DIST" \
    "$@"
}

# The node's process id, when it is alive.
node_pid() {
  [ -s "$pidfile" ] || return 1
  local pid
  pid="$(tr -dc '0-9' <"$pidfile")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

running() {
  node_pid >/dev/null && port_open "$PORT"
}

start() {
  if running; then
    echo "already running on 127.0.0.1:$PORT (guest/guest)"
    return 0
  fi
  if node_pid >/dev/null; then
    # started by another call that is still booting: wait for it rather than start a second node
    wait_until running 60 "rabbitmq on 127.0.0.1:$PORT"
    echo "running on 127.0.0.1:$PORT (guest/guest)"
    return 0
  fi
  if port_open "$PORT"; then
    echo "something else already listens on 127.0.0.1:$PORT; not starting rabbitmq" >&2
    return 1
  fi
  apt_install rabbitmq-server
  mkdir -p "$dir/log" "$dir/mnesia"
  cat >"$dir/rabbitmq.conf" <<EOF
listeners.tcp.default = 127.0.0.1:$PORT
# a small /tmp must not raise the disk alarm that blocks every publisher
disk_free_limit.absolute = 50MB
# modest memory: publishers are blocked (flow control) beyond this, not the machine's 40 %
vm_memory_high_watermark.absolute = 512MB
log.console = false
log.file.level = warning
EOF
  echo '[].' >"$dir/enabled_plugins"
  chown -R rabbitmq:rabbitmq "$dir"
  rm -f "$pidfile"
  # detached from this shell: the node keeps running after the script returns
  setsid bash -c "$(declare -f as_rabbit); $(declare -p NODE dir pidfile LOOPBACK_DIST EPMD_PORT DIST_PORT); \
    as_rabbit /usr/lib/rabbitmq/bin/rabbitmq-server" >>"$dir/log/startup.log" 2>&1 </dev/null &
  local launcher=$!
  # the node writes its pid file early in its boot; a launcher that died meanwhile failed to start
  if ! wait_until "[ -s '$pidfile' ] || ! kill -0 $launcher" 60 "the rabbitmq pid file" || [ ! -s "$pidfile" ]; then
    echo "rabbitmq did not start; see $dir/log" >&2
    tail -n 20 "$dir/log/startup.log" >&2 || true
    return 1
  fi
  # `wait PIDFILE` returns once the node has booted (await_startup fails before it registers)
  if ! as_rabbit timeout 90 /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$NODE" wait "$pidfile" --timeout 80 >/dev/null; then
    echo "rabbitmq did not finish booting; see $dir/log" >&2
    tail -n 20 "$dir/log/startup.log" >&2 || true
    return 1
  fi
  wait_until "port_open $PORT" 30 "the AMQP listener on 127.0.0.1:$PORT"
  echo "running on 127.0.0.1:$PORT (guest/guest)"
}

stop() {
  local pid
  if pid="$(node_pid)"; then
    # `stop PIDFILE` returns once the node's process has exited
    as_rabbit timeout 60 /usr/lib/rabbitmq/bin/rabbitmqctl -q -n "$NODE" stop "$pidfile" >/dev/null 2>&1 || true
    if kill -0 "$pid" 2>/dev/null; then
      echo "the node did not stop in time; killing process $pid" >&2
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
  # epmd, started by the node, outlives it
  if port_open "$EPMD_PORT"; then
    as_rabbit epmd -kill >/dev/null 2>&1 || true
  fi
  echo "stopped"
}

status() {
  if running; then
    echo "running on 127.0.0.1:$PORT (pid $(node_pid))"
    return 0
  fi
  echo "not running"
  return 1
}

service_main "$@"
