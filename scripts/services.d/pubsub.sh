#!/usr/bin/env bash
# Google Cloud Pub/Sub for the pubsub connector tests: Google's own in-memory
# fake (cloud.google.com/go/pubsub/v2/pstest; the official emulator ships only
# with the gcloud SDK), wrapped in a small Go main that serves it on
# 127.0.0.1:${EDDY_PUBSUB_PORT:-8085}. Built once from the Go module proxy and
# cached under ${EDDY_PUBSUB_CACHE:-/var/cache/eddy-services/pubsub}, so a
# restart does not rebuild (a cold build takes about 90 s). Clients find it
# with PUBSUB_EMULATOR_HOST=127.0.0.1:8085 (plaintext gRPC, no credentials).
# It keeps everything in memory: a restart forgets every topic and message;
# it starts with the topic and subscription examples/pubsub.yaml reads
# (project eddy-example).
#
#   pubsub.sh start | stop | status
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

port="${EDDY_PUBSUB_PORT:-8085}"
# the pstest release the binary is built from; a new one (or a changed main) means a new cached binary
version="v2.8.1"
build_id="$version-2"
cache="${EDDY_PUBSUB_CACHE:-/var/cache/eddy-services/pubsub}"
bin="$cache/pstest-$build_id"
# what examples/pubsub.yaml reads exists from the start, so the example activates on a fresh fake
example_topic="projects/eddy-example/topics/eddy-example"
example_sub="projects/eddy-example/subscriptions/eddy-example"
dir="$(service_dir pubsub)"
pidfile="$dir/pubsub.pid"
log="$dir/pubsub.log"

running() {
  pid_running "$pidfile"
}

# Writes the Go main and builds it (go mod tidy fetches pstest and its dependencies from the Go module proxy).
build() {
  local go
  go="$(command -v go || true)"
  [ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
  if [ -z "$go" ]; then
    echo "no Go toolchain (go on PATH or /usr/local/go/bin/go): it is needed once to build the Pub/Sub fake" >&2
    return 1
  fi
  local src="$cache/src"
  rm -rf "$src"
  mkdir -p "$src"
  cat >"$src/main.go" <<'EOF'
// Serves Google's Pub/Sub fake (pstest) until SIGTERM or SIGINT, with the
// topics and subscriptions named by -topic and -subscription created first
// (the fake keeps everything in memory: a restart starts empty).
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8085", "host:port to listen on")
	topics := flag.String("topic", "", "comma-separated topics to create: projects/P/topics/T")
	subs := flag.String("subscription", "", "comma-separated subscriptions to create: projects/P/subscriptions/S=projects/P/topics/T")
	flag.Parse()
	srv := pstest.NewServerWithAddress(*addr)
	ctx := context.Background()
	for _, t := range strings.Split(*topics, ",") {
		if t == "" {
			continue
		}
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: t}); err != nil {
			log.Fatalf("topic %s: %v", t, err)
		}
	}
	for _, s := range strings.Split(*subs, ",") {
		if s == "" {
			continue
		}
		name, topic, _ := strings.Cut(s, "=")
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: name, Topic: topic, AckDeadlineSeconds: 10}); err != nil {
			log.Fatalf("subscription %s: %v", name, err)
		}
	}
	log.Printf("pstest listening on %s", srv.Addr)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	if err := srv.Close(); err != nil {
		log.Printf("close: %v", err)
	}
}
EOF
  echo "building the Pub/Sub fake (pstest $version) from the Go module proxy; about 90 s the first time"
  (
    cd "$src"
    export GOFLAGS=-mod=mod GOTOOLCHAIN=local
    "$go" mod init eddy/pstest >/dev/null 2>&1
    # the package, not the module: only what pstest itself needs is fetched (go mod tidy would also fetch the tests' dependencies)
    "$go" get "cloud.google.com/go/pubsub/v2/pstest@$version" >/dev/null 2>&1
    "$go" build -trimpath -ldflags='-s -w' -o "$bin.tmp" .
  ) || {
    echo "building pstest failed (retry with the output: cd $src && go build .)" >&2
    return 1
  }
  mv "$bin.tmp" "$bin"
  # binaries of other builds are never used again
  find "$cache" -maxdepth 1 -name 'pstest-*' ! -name "pstest-$build_id" -delete
}

case "${1:-}" in
  start)
    if running; then
      echo "already running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
      exit 0
    fi
    if port_open "$port"; then
      echo "something else already listens on 127.0.0.1:$port; stop it or set EDDY_PUBSUB_PORT" >&2
      exit 1
    fi
    mkdir -p "$cache"
    # one build at a time, should two starts race
    (
      flock 9
      [ -x "$bin" ] || build
    ) 9>"$cache/build.lock"
    rm -f "$pidfile"
    : >"$log"
    setsid "$bin" -addr "127.0.0.1:$port" -topic "$example_topic" -subscription "$example_sub=$example_topic" </dev/null >>"$log" 2>&1 &
    server=$!
    echo "$server" >"$pidfile"
    ready() { kill -0 "$server" 2>/dev/null && port_open "$port"; }
    wait_until "ready || ! kill -0 $server" 30 "the Pub/Sub fake to listen on 127.0.0.1:$port" || true
    if ! ready; then
      echo "the Pub/Sub fake did not start:" >&2
      tail -20 "$log" >&2
      kill "$server" 2>/dev/null || true
      rm -f "$pidfile"
      exit 1
    fi
    echo "running on 127.0.0.1:$port (PUBSUB_EMULATOR_HOST=127.0.0.1:$port)"
    ;;
  stop)
    stop_pidfile "$pidfile" 5 "the Pub/Sub fake"
    ;;
  status)
    if running && port_open "$port"; then
      echo "running on 127.0.0.1:$port (pid $(cat "$pidfile"))"
    else
      echo "not running"
      exit 1
    fi
    ;;
  *)
    echo "usage: pubsub.sh start|stop|status" >&2
    exit 2
    ;;
esac
