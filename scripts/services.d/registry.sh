#!/usr/bin/env bash
# Apicurio Registry 2.6.13.Final, a schema registry with a Confluent-compatible
# REST API (under /apis/ccompat/v7), for the avro and protobuf codec tests.
# From Maven Central (io.apicurio:apicurio-registry-app, the `all` tar.gz: a
# Quarkus application), in-memory storage, on 127.0.0.1 only.
#
#   registry.sh start    install what is missing, start, wait until the API answers
#   registry.sh stop     stop it (TERM, then KILL after 30 s); nothing is left running
#   registry.sh status   one line; exit 0 when running
#
# Why Apicurio 2.6: Karapace is not on PyPI, Confluent's own registry is not on
# Maven Central, and Apicurio 3.x needs Java 21 where Debian 12 has 17.
# Not on 8081 (the Confluent default), so it never stands in the way of a
# registry of your own. The application is cached in $EDDY_REGISTRY_CACHE
# (default /var/cache/eddy-services/registry); logs in $EDDY_SERVICES_DIR/registry.
# Schemas live in memory: a restart starts empty.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

VERSION=2.6.13.Final
PORT="${EDDY_REGISTRY_PORT:-18081}"
dir="$(service_dir registry)"
cache="${EDDY_REGISTRY_CACHE:-/var/cache/eddy-services/registry}"
mkdir -p "$cache" 2>/dev/null || cache="$dir/dist"
mkdir -p "$cache"
app="$cache/apicurio-registry-$VERSION"
pidfile="$dir/registry.pid"
log="$dir/registry.log"

running() {
  pid_running "$pidfile"
}

install() {
  command -v java >/dev/null 2>&1 || apt_install openjdk-17-jre-headless
  [ -f "$app/.complete" ] && return 0
  command -v mvn >/dev/null 2>&1 || apt_install maven
  (
    # two starts at once fetch once
    flock 8
    [ -f "$app/.complete" ] && exit 0
    echo "fetching apicurio-registry-app $VERSION from Maven Central"
    rm -rf "$app" "$cache/download"
    mkdir -p "$app" "$cache/download"
    mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$VERSION:tar.gz:all" \
      -DoutputDirectory="$cache/download" >"$cache/mvn.log" 2>&1 || { cat "$cache/mvn.log" >&2; exit 1; }
    tar xzf "$cache/download/apicurio-registry-app-$VERSION-all.tar.gz" -C "$app"
    rm -rf "$cache/download"
    touch "$app/.complete"
  ) 8>"$cache/.lock"
}

answers() {
  curl -sf "http://127.0.0.1:$PORT/apis/ccompat/v7/subjects" >/dev/null
}

start() {
  if running; then
    echo "already running on http://127.0.0.1:$PORT/apis/ccompat/v7 (pid $(cat "$pidfile"))"
    return 0
  fi
  if port_open "$PORT"; then
    echo "something else listens on 127.0.0.1:$PORT; not starting a second registry" >&2
    return 1
  fi
  command -v curl >/dev/null 2>&1 || apt_install curl
  install
  : >"$log"
  # a session of its own, as the other services have: a Ctrl-C to whatever started it does not reach it
  cd "$dir"
  setsid nohup java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$PORT" \
    -jar "$app/apicurio-registry-app-$VERSION-runner.jar" >"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  if ! wait_until "answers || ! running" 90 "the registry to answer" || ! running; then
    echo "the registry did not start; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    stop >/dev/null 2>&1 || true
    return 1
  fi
  echo "running on http://127.0.0.1:$PORT/apis/ccompat/v7"
}

stop() {
  stop_pidfile "$pidfile" 30 "registry"
}

status() {
  if running; then
    echo "running on http://127.0.0.1:$PORT/apis/ccompat/v7 (pid $(cat "$pidfile"))"
    return 0
  fi
  echo "not running"
  return 1
}

service_main "$@"
