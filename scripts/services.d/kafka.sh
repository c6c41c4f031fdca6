#!/usr/bin/env bash
# Kafka 3.9.1 in KRaft mode (one process: broker and controller), from
# Maven Central jars, on 127.0.0.1:9092 (controller on 127.0.0.1:9093).
#
#   kafka.sh start    install what is missing, format the storage once, start, wait for "Kafka Server started"
#   kafka.sh stop     stop it (TERM, then KILL after 30 s); nothing is left running
#   kafka.sh status   one line; exit 0 when running
#
# The jars are cached in $EDDY_KAFKA_CACHE (default /var/cache/eddy-services/kafka),
# so a second start does not download again; data and logs are in
# $EDDY_SERVICES_DIR/kafka. The ports come from EDDY_KAFKA_PORT [9092] and
# EDDY_KAFKA_CONTROLLER_PORT [9093], so a test can run a private broker
# (test/helpers/private-service.ts) beside the shared one, with its own
# $EDDY_SERVICES_DIR.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

VERSION=3.9.1
PORT="${EDDY_KAFKA_PORT:-9092}"
CONTROLLER_PORT="${EDDY_KAFKA_CONTROLLER_PORT:-9093}"
dir="$(service_dir kafka)"
cache="${EDDY_KAFKA_CACHE:-/var/cache/eddy-services/kafka}"
mkdir -p "$cache" 2>/dev/null || cache="$dir/dist"
lib="$cache/kafka-$VERSION/lib"
pidfile="$dir/kafka.pid"
log="$dir/server.log"

running() {
  pid_running "$pidfile"
}

install() {
  command -v java >/dev/null 2>&1 || apt_install openjdk-17-jre-headless
  [ -f "$lib/.complete" ] && return 0
  command -v mvn >/dev/null 2>&1 || apt_install maven
  (
    # two starts at once fetch once
    flock 8
    [ -f "$lib/.complete" ] && exit 0
    echo "fetching kafka_2.13 $VERSION from Maven Central"
    local build="$cache/kafka-$VERSION"
    mkdir -p "$build"
    cat >"$build/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>eddy.services</groupId>
  <artifactId>kafka-server</artifactId>
  <version>1</version>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
EOF
    rm -rf "$lib"
    (cd "$build" && mvn -q -B -Dstyle.color=never dependency:copy-dependencies -DoutputDirectory="$lib" -DincludeScope=runtime >"$build/mvn.log" 2>&1) ||
      { cat "$build/mvn.log" >&2; exit 1; }
    touch "$lib/.complete"
  ) 8>"$cache/.lock"
}

configure() {
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# tests kill consumers and wait for the group to notice: allow short sessions
group.min.session.timeout.ms=1000
EOF
  cat >"$dir/log4j.properties" <<EOF
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
# the readiness line
log4j.logger.kafka.server.KafkaRaftServer=INFO
EOF
}

start() {
  if running; then
    echo "already running on 127.0.0.1:$PORT (pid $(cat "$pidfile"))"
    return 0
  fi
  if port_open "$PORT"; then
    echo "something else listens on 127.0.0.1:$PORT; not starting a second kafka" >&2
    return 1
  fi
  install
  configure
  if [ ! -f "$dir/data/meta.properties" ]; then
    # a cluster id is 16 random bytes, base64url without padding; one in 64 starts with "-",
    # which the argument parser takes for an option unless it is given as --cluster-id=ID
    local id
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    java -Dlog4j.configuration="file:$dir/log4j.properties" -cp "$lib/*" kafka.tools.StorageTool format --cluster-id="$id" -c "$dir/server.properties" >"$dir/format.log" 2>&1 ||
      { cat "$dir/format.log" >&2; return 1; }
  fi
  : >"$log"
  # a session of its own, as the other services have: a Ctrl-C to whatever started it (npm test starts
  # the services that are down) does not reach the broker
  setsid nohup java -Xmx512m -Xms256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j.configuration="file:$dir/log4j.properties" -cp "$lib/*" kafka.Kafka "$dir/server.properties" \
    >"$dir/stdout.log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  if ! wait_until "grep -q 'Kafka Server started' '$log' || ! running" 90 "kafka to start" || ! running; then
    echo "kafka did not start; last lines of $log and $dir/stdout.log:" >&2
    tail -n 20 "$log" "$dir/stdout.log" >&2 || true
    stop >/dev/null 2>&1 || true
    return 1
  fi
  echo "running on 127.0.0.1:$PORT"
}

stop() {
  stop_pidfile "$pidfile" 30 "kafka"
}

status() {
  if running; then
    echo "running on 127.0.0.1:$PORT (pid $(cat "$pidfile"))"
    return 0
  fi
  echo "not running"
  return 1
}

service_main "$@"
