# Shared by scripts/services.d/*.sh (sourced, not run).
set -euo pipefail
EDDY_SERVICES_DIR="${EDDY_SERVICES_DIR:-/tmp/eddy-services}"
# runuser, useradd and the servers' own tools live in the sbin folders, which a user's or CI's PATH may leave out
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# The state folder of one service: data, logs, pid files.
service_dir() {
  mkdir -p "$EDDY_SERVICES_DIR/$1"
  echo "$EDDY_SERVICES_DIR/$1"
}

# Installs Debian packages that are missing; apt runs one at a time across parallel starts.
apt_install() {
  local missing=()
  # installed, not merely known to dpkg (a removed but not purged package still answers dpkg -s)
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  (
    flock 9
    if [ ! -f /tmp/eddy-apt-updated ]; then $sudo apt-get update -qq && touch /tmp/eddy-apt-updated; fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ) 9>/tmp/eddy-apt.lock
}

# Waits until a command succeeds, up to $2 seconds; fails naming $3.
wait_until() {
  local check="$1" seconds="$2" what="$3"
  local deadline=$((SECONDS + seconds))
  until eval "$check" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      echo "gave up after ${seconds}s waiting for $what" >&2
      return 1
    fi
    sleep 0.3
  done
}

# True when something accepts TCP connections on 127.0.0.1:$1.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The entry point of a service script that defines start, stop and status.
service_main() {
  case "${1:-}" in
    start | stop | status) "$1" ;;
    *)
      echo "usage: $(basename "$0") start|stop|status" >&2
      exit 2
      ;;
  esac
}

# True when the process named by pid file $1 is alive.
pid_running() {
  [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

# Stops the process named by pid file $1: SIGTERM, up to $2 seconds for it to
# end (a clean shutdown may write state), then SIGKILL; removes the pid file.
# $3 names the service in the messages.
stop_pidfile() {
  local pidfile="$1" seconds="$2" what="$3" pid
  if ! pid_running "$pidfile"; then
    rm -f "$pidfile"
    echo "not running"
    return 0
  fi
  pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_until "! kill -0 $pid" "$seconds" "$what to stop"; then
    kill -KILL "$pid" 2>/dev/null || true
    wait_until "! kill -0 $pid" 5 "$what to die"
  fi
  rm -f "$pidfile"
  echo "stopped"
}
