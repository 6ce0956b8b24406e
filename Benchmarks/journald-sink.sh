#!/usr/bin/env bash
# Starts a private systemd-journald (mount namespace, volatile storage under a scratch folder; the
# host's journal is never touched), runs `castline-sink-bench journald` inside its namespace,
# prints journald's own count of stored entries, and stops it by PID.
#   Benchmarks/journald-sink.sh BENCH_BINARY PLUGIN_DIR
set -euo pipefail
bench="$1"; plugins="$2"
S=$(mktemp -d /tmp/castline-journald-bench-XXXXXX)
mkdir -p "$S/run/systemd/journald.conf.d" "$S/empty"
printf '[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\nForwardToConsole=no\nRuntimeMaxUse=256M\nRateLimitBurst=0\n' \
  > "$S/run/systemd/journald.conf.d/bench.conf"
unshare -m --propagation private sh -c \
  'mount --bind "$1" /run && { [ ! -d /var/log/journal ] || mount --bind "$2" /var/log/journal; } && exec /lib/systemd/systemd-journald' \
  sh "$S/run" "$S/empty" </dev/null >"$S/journald.log" 2>&1 &
JPID=$!
cleanup() { kill "$JPID" 2>/dev/null || true; wait "$JPID" 2>/dev/null || true; rm -rf "$S"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -S "$S/run/systemd/journal/socket" ] && break; sleep 0.1; done
[ -S "$S/run/systemd/journal/socket" ] || { echo "journald did not start: $(cat "$S/journald.log")" >&2; exit 1; }
nsenter -t "$JPID" -m "$bench" journald "$plugins"
sleep 0.5
stored=$(journalctl -D "$S/run/log/journal" --no-pager -o cat SYSLOG_IDENTIFIER=castline-bench | wc -l)
echo "{\"name\":\"journald-sink.stored\",\"value\":$stored,\"unit\":\"entries read back with journalctl\"}"
