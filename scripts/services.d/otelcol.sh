#!/usr/bin/env bash
# An OpenTelemetry Collector v0.150.0 for the otel onramp tests: a small
# collector built from the Go module proxy (the otlp receiver, the otlp_grpc
# exporter and the debug exporter, nothing else), on loopback only.
#
#   receives OTLP/gRPC on   127.0.0.1:${EDDY_OTELCOL_PORT:-14317}
#   exports everything to   127.0.0.1:${EDDY_OTELCOL_EXPORT_PORT:-14319}  (where the test runs an eddy otel onramp)
#   and logs it (debug exporter) to $EDDY_SERVICES_DIR/otelcol/otelcol.log
#
# Not on 4317/4318, the OTLP ports, so it never stands in the way of an
# eddy otel onramp (or a collector of your own) on the standard port.
#
#   otelcol.sh start    build once (cached), start, wait until it listens
#   otelcol.sh stop     stop it; nothing is left running
#   otelcol.sh status   one line; exit 0 when running
#   otelcol.sh reload   SIGHUP: the collector reloads its config and rebuilds
#                       its pipelines, so its exporter connects to the eddy
#                       port at once (gRPC backs off up to 2 minutes between
#                       attempts while nothing listens there)
#   otelcol.sh file-binary
#                       build once (cached) a second collector, with the otlp
#                       receiver and the file exporter of collector-contrib,
#                       and print its path: the otel offramp tests run it
#                       with configs of their own (never started here)
#
# The binary is cached in $EDDY_OTELCOL_CACHE (default
# /var/cache/eddy-services/otelcol): a second start does not build again.
# A cold build (module downloads and compile) takes a few minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=_lib.sh
source "$here/_lib.sh"

VERSION=0.150.0
# the stable (1.x) collector modules released together with $VERSION
STABLE=1.56.0
PORT="${EDDY_OTELCOL_PORT:-14317}"
EXPORT_PORT="${EDDY_OTELCOL_EXPORT_PORT:-14319}"
dir="$(service_dir otelcol)"
cache="${EDDY_OTELCOL_CACHE:-/var/cache/eddy-services/otelcol}"
mkdir -p "$cache" 2>/dev/null || cache="$dir/dist"
mkdir -p "$cache"
bin="$cache/otelcol-$VERSION"
pidfile="$dir/otelcol.pid"
log="$dir/otelcol.log"
config="$dir/config.yaml"

running() {
  pid_running "$pidfile"
}

go_bin() {
  command -v go 2>/dev/null || { [ -x /usr/local/go/bin/go ] && echo /usr/local/go/bin/go; } || true
}

# build_collector BIN EXPORTER_PACKAGE...: builds once, into BIN, a collector
# with the otlp receiver and the exporters of these Go packages, configs from
# files. The packages main imports are fetched at the release's versions;
# `go get` resolves only what they need (no `go mod tidy`, which fetches
# every test dependency).
build_collector() {
  local out="$1"
  shift
  [ -x "$out" ] && return 0
  local go
  go="$(go_bin)"
  if [ -z "$go" ]; then
    echo "no Go toolchain found (go on PATH or /usr/local/go/bin/go): it is needed to build the collector" >&2
    return 1
  fi
  (
    # two starts at once build once
    flock 8
    [ -x "$out" ] && exit 0
    echo "building $(basename "$out") from the Go module proxy (a few minutes the first time)" >&2
    local src="$out.build"
    rm -rf "$src"
    mkdir -p "$src"
    # collector-contrib's internal/sharedcomponent $VERSION (the file
    # exporter needs it) is not served by the Go proxy (403): the previous
    # release's stands in; a build without contrib modules ignores the line
    local shared=github.com/open-telemetry/opentelemetry-collector-contrib/internal/sharedcomponent
    cat >"$src/go.mod" <<EOF
module eddy.services/otelcol

go 1.24

replace $shared => $shared v0.149.0
EOF
    local imports="" factories="" pkg
    for pkg in "$@"; do
      imports+="	\"$pkg\""$'\n'
      factories+="${pkg##*/}.NewFactory(), "
    done
    cat >"$src/main.go" <<EOF
// A minimal OpenTelemetry Collector for eddy's tests: the otlp receiver,
// the exporters $*, configs from files.
package main

import (
	"log"

${imports}
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func components() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](${factories%, })
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: receivers, Exporters: exporters, Telemetry: otelconftelemetry.NewFactory()}, nil
}

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "eddy-otelcol", Description: "OpenTelemetry Collector for eddy's tests", Version: "$VERSION"},
		Factories: components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
				DefaultScheme:     "file",
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}
EOF
    (
      cd "$src"
      export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
      "$go" get \
        "${@/%/@v$VERSION}" \
        "go.opentelemetry.io/collector/otelcol@v$VERSION" \
        "go.opentelemetry.io/collector/receiver/otlpreceiver@v$VERSION" \
        "go.opentelemetry.io/collector/service/telemetry/otelconftelemetry@v$VERSION" \
        "go.opentelemetry.io/collector/confmap/provider/fileprovider@v$STABLE" &&
        "$go" build -trimpath -ldflags='-s -w' -o "$out.tmp" .
    ) >"$src/build.log" 2>&1 || { tail -n 30 "$src/build.log" >&2; exit 1; }
    mv "$out.tmp" "$out"
    rm -rf "$src"
    echo "built $out" >&2
  ) 8>"$cache/.lock"
}

# the shared collector's: the otlp_grpc exporter (to eddy) and the debug exporter
build() {
  build_collector "$bin" go.opentelemetry.io/collector/exporter/otlpexporter go.opentelemetry.io/collector/exporter/debugexporter
}

# The collector of the otel offramp tests: the file exporter of
# collector-contrib ($VERSION; `go get` then resolves the newer core modules
# it needs). Only built here (`file-binary`): the tests run it themselves.
file_bin="$cache/otelcol-file-$VERSION"
build_file() {
  build_collector "$file_bin" github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter
}

configure() {
  cat >"$config" <<EOF
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$PORT
exporters:
  debug:
    verbosity: basic
  otlp_grpc:
    endpoint: 127.0.0.1:$EXPORT_PORT
    tls:
      insecure: true
    # short back-off, so a test does not wait long once eddy accepts again;
    # a RetryInfo from the receiver (eddy's, while its circuit breaker is
    # triggered) asks for longer and is honoured
    retry_on_failure:
      initial_interval: 100ms
      max_interval: 1s
      max_elapsed_time: 120s
    # one request at a time, each retried until it is through before the
    # next: what the collector sends arrives in the order it received it, so
    # a test that sends a last sentinel span and sees it arrive knows that
    # every earlier export is finished (no duplicate can still come)
    sending_queue:
      num_consumers: 1
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_grpc, debug]
    logs:
      receivers: [otlp]
      exporters: [otlp_grpc, debug]
    metrics:
      receivers: [otlp]
      exporters: [otlp_grpc, debug]
EOF
}

start() {
  if running; then
    echo "already running on 127.0.0.1:$PORT (pid $(cat "$pidfile")), exporting to 127.0.0.1:$EXPORT_PORT"
    return 0
  fi
  if port_open "$PORT"; then
    echo "something else listens on 127.0.0.1:$PORT; stop it or set EDDY_OTELCOL_PORT" >&2
    return 1
  fi
  build
  configure
  rm -f "$pidfile"
  : >"$log"
  setsid "$bin" --config="$config" </dev/null >>"$log" 2>&1 &
  local pid=$!
  echo "$pid" >"$pidfile"
  ready() { kill -0 "$pid" 2>/dev/null && port_open "$PORT" && grep -q 'Everything is ready' "$log"; }
  wait_until "ready || ! kill -0 $pid" 30 "the collector to listen on 127.0.0.1:$PORT" || true
  if ! ready; then
    echo "the collector did not start; last lines of $log:" >&2
    tail -n 20 "$log" >&2 || true
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    return 1
  fi
  echo "running on 127.0.0.1:$PORT (OTLP/gRPC), exporting to 127.0.0.1:$EXPORT_PORT"
}

stop() {
  stop_pidfile "$pidfile" 15 "the collector"
}

status() {
  if running && port_open "$PORT"; then
    echo "running on 127.0.0.1:$PORT (pid $(cat "$pidfile")), exporting to 127.0.0.1:$EXPORT_PORT"
    return 0
  fi
  echo "not running"
  return 1
}

reload() {
  if ! running; then
    echo "not running" >&2
    return 1
  fi
  local before
  before="$(grep -c 'Everything is ready' "$log" || true)"
  kill -HUP "$(cat "$pidfile")"
  wait_until "[ \"\$(grep -c 'Everything is ready' '$log')\" -gt $before ] && port_open $PORT" 15 "the collector to reload"
  echo "reloaded"
}

case "${1:-}" in
  start | stop | status | reload) "$1" ;;
  file-binary) build_file && echo "$file_bin" ;;
  *)
    echo "usage: $(basename "$0") start|stop|status|reload|file-binary" >&2
    exit 2
    ;;
esac
