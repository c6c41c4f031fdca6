#!/usr/bin/env bash
# Elasticsearch 8.15.0 for the elastic connector tests, on 127.0.0.1:9200 only.
#
#   start   installs what is missing (Java 17, Maven, unzip from Debian; the
#           integ-test zip from Maven Central, unpacked once into a cache
#           kept across starts), starts one single-node cluster as the user
#           eddy-elastic (Elasticsearch refuses root), waits until
#           GET /_cluster/health answers, prints the address
#   stop    stops it and waits until the JVM is gone
#   status  one line; exit 0 when it answers, 1 when not
#
# The integ-test zip carries the HTTP and transport modules and x-pack
# security only: _bulk, _search, index and cluster APIs work; ingest
# pipelines, reindex and painless do not. GET / answers 405 here, so
# readiness is probed on /_cluster/health.
set -euo pipefail
# shellcheck source=_lib.sh
source "$(dirname "$0")/_lib.sh"

VERSION=8.15.0
PORT=9200
TRANSPORT_PORT=9300
ES_USER=eddy-elastic
DIR="$(service_dir elastic)"
PIDFILE="$DIR/elastic.pid"
# the unpacked distribution: outside the state folder, so `rm -rf $EDDY_SERVICES_DIR` does not cost a download
if [ -n "${EDDY_ELASTIC_CACHE:-}" ]; then
  CACHE="$EDDY_ELASTIC_CACHE"
elif mkdir -p /var/cache/eddy-services 2>/dev/null && [ -w /var/cache/eddy-services ]; then
  CACHE=/var/cache/eddy-services/elastic
else
  CACHE="$DIR/dist"
fi
HOME_DIR="$CACHE/elasticsearch-$VERSION"

answers() {
  curl -fsS -m 2 "http://127.0.0.1:$PORT/_cluster/health" >/dev/null 2>&1
}

running_pid() {
  [ -f "$PIDFILE" ] || return 1
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null)"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

java_home() {
  # Debian's Java 17 (the machine may carry other JDKs beside it)
  local jh=/usr/lib/jvm/java-17-openjdk-amd64
  [ -x "$jh/bin/java" ] || jh="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  echo "$jh"
}

install() {
  apt_install openjdk-17-jre-headless maven unzip curl
  [ -x "$HOME_DIR/bin/elasticsearch" ] && return 0
  echo "fetching elasticsearch $VERSION (integ-test zip) from Maven Central"
  mkdir -p "$CACHE"
  local tmp
  tmp="$(mktemp -d "$CACHE/.fetch.XXXXXX")"
  # a private local repository: parallel Maven runs of other services never write the same files
  # (a client JVM that starts fast: this runs on a busy machine, beside the other services' starts)
  MAVEN_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1" mvn -q -B -Dmaven.repo.local="$tmp/m2" dependency:copy \
    -Dartifact="org.elasticsearch.distribution.integ-test-zip:elasticsearch:$VERSION:zip" \
    -DoutputDirectory="$tmp/zip" >"$tmp/mvn.log" 2>&1 || { cat "$tmp/mvn.log" >&2; rm -rf "$tmp"; return 1; }
  unzip -q "$tmp/zip/elasticsearch-$VERSION.zip" -d "$tmp/unpacked"
  # moved into place whole, so a start interrupted while unpacking never leaves half a distribution
  mv "$tmp/unpacked/elasticsearch-$VERSION" "$HOME_DIR"
  rm -rf "$tmp"
}

configure() {
  id -u "$ES_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$ES_USER"
  local conf="$DIR/config"
  mkdir -p "$conf" "$DIR/data" "$DIR/logs" "$DIR/tmp"
  cp "$HOME_DIR/config/log4j2.properties" "$conf/"
  cat >"$conf/elasticsearch.yml" <<EOF
cluster.name: eddy-test
node.name: eddy-elastic
path.data: $DIR/data
path.logs: $DIR/logs
network.host: 127.0.0.1
http.port: $PORT
transport.port: $TRANSPORT_PORT
discovery.type: single-node
xpack.security.enabled: false
# a test machine's disk may be nearly full: never turn indices read-only for that
cluster.routing.allocation.disk.threshold_enabled: false
action.destructive_requires_name: false
EOF
  # the distribution's jvm.options writes gc logs and heap dumps relative to the
  # install folder, which is shared and not this user's: everything goes to $DIR
  cat >"$conf/jvm.options" <<EOF
-XX:+UseSerialGC
-XX:TieredStopAtLevel=1
-XX:-AlwaysPreTouch
-Xms512m
-Xmx512m
-XX:+ExitOnOutOfMemoryError
-XX:ErrorFile=$DIR/logs/hs_err_pid%p.log
-Djava.io.tmpdir=\${ES_TMPDIR}
EOF
  chown -R "$ES_USER" "$DIR"
}

start() {
  if answers; then
    echo "already running on 127.0.0.1:$PORT"
    return 0
  fi
  if running_pid >/dev/null; then
    echo "a node is starting (pid $(running_pid)); waiting for it"
  else
    if port_open "$PORT"; then
      echo "port $PORT is taken by something that is not an answering Elasticsearch" >&2
      return 1
    fi
    install
    configure
    rm -f "$PIDFILE"
    local jh
    jh="$(java_home)"
    # -d: the launcher returns once the node has started (or failed); its output goes to the log
    runuser -u "$ES_USER" -- env ES_JAVA_HOME="$jh" ES_PATH_CONF="$DIR/config" ES_TMPDIR="$DIR/tmp" \
      ES_JAVA_OPTS="-Xms512m -Xmx512m" \
      CLI_JAVA_OPTS="-XX:+UseSerialGC -XX:TieredStopAtLevel=1" "$HOME_DIR/bin/elasticsearch" -d -p "$PIDFILE" >"$DIR/launcher.log" 2>&1 || {
      echo "elasticsearch failed to start:" >&2
      tail -n 30 "$DIR/launcher.log" >&2
      tail -n 30 "$DIR/logs/eddy-test.log" >&2 2>/dev/null || true
      return 1
    }
  fi
  wait_until answers 90 "elasticsearch on 127.0.0.1:$PORT" || {
    tail -n 30 "$DIR/logs/eddy-test.log" >&2 2>/dev/null || true
    return 1
  }
  echo "elasticsearch $VERSION on http://127.0.0.1:$PORT"
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PIDFILE"
    echo "not running"
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "still running after 30 s: killing pid $pid"
      kill -9 "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  rm -f "$PIDFILE"
  echo "stopped"
}

status() {
  if answers; then
    local pid
    pid="$(running_pid || true)"
    echo "running on 127.0.0.1:$PORT${pid:+ (pid $pid)}"
    return 0
  fi
  echo "not running"
  return 1
}

service_main "$@"
