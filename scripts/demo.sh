#!/usr/bin/env bash
# `make demo`: cast a sample to the built-in simulator and show it playing.
#   1. starts `castline sim` with one device on 127.0.0.1:28009 (configs/demo-sim.json; loopback only,
#      no mDNS), 2. casts a local sample file (served by castline's HTTP server; the simulated device
#      fetches a byte range of it), 3. shows the live status view for a few seconds, 4. stops the cast,
#      the simulator and prints where the JSON logs went. Everything it starts is stopped by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${CASTLINE_BIN:-$(swift build --show-bin-path)/castline}"
DEMO=.build/demo
SECONDS_SHOWN="${DEMO_SECONDS:-6}"
rm -rf "$DEMO" && mkdir -p "$DEMO/logs"

sim_pid="" cast_pid=""
cleanup() {
  for pid in $cast_pid $sim_pid; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in $cast_pid $sim_pid; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

echo "== castline demo: starting the simulator (127.0.0.1:28009, loopback only)"
"$BIN" sim --no-mdns --config configs/demo-sim.json --log "*:warning,SimulatedDevice:info,MediaPlayer:info" >"$DEMO/sim.out" 2>"$DEMO/sim.log" &
sim_pid=$!
for _ in $(seq 1 100); do grep -q '"event":"ready"' "$DEMO/sim.out" 2>/dev/null && break; sleep 0.1; done
grep -q '"event":"ready"' "$DEMO/sim.out" || { echo "the simulator did not start:"; cat "$DEMO/sim.log"; exit 1; }

# A sample "4K HDR trailer": the simulator's media rules give *2160p* files a 4K HDR video and 2 minutes.
SAMPLE="$DEMO/castline-demo-trailer-2160p.mp4"
{ printf '\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom'; head -c 262144 /dev/zero; } >"$SAMPLE"

echo "== castline cast $SAMPLE --device demo"
"$BIN" cast "$SAMPLE" --device demo --config configs/demo.yaml --title "castline demo trailer" \
  --subtitle "served by castline's built-in HTTP server" >"$DEMO/cast.out" 2>"$DEMO/cast.err" &
cast_pid=$!
for _ in $(seq 1 100); do [ -s "$DEMO/cast.out" ] && break; kill -0 "$cast_pid" 2>/dev/null || break; sleep 0.1; done
if ! grep -q PLAYING "$DEMO/cast.out"; then echo "the cast did not reach PLAYING:"; cat "$DEMO/cast.out" "$DEMO/cast.err"; exit 1; fi
cat "$DEMO/cast.out"

echo "== castline status --follow --device demo (for ${SECONDS_SHOWN} s)"
"$BIN" status --follow --for "$SECONDS_SHOWN" --device demo --config configs/demo.yaml

echo "== castline stop --app --device demo"
"$BIN" stop --app --device demo --config configs/demo.yaml
kill -TERM "$cast_pid" 2>/dev/null || true  # it may have ended already: the app stopped
wait "$cast_pid" || true; cast_pid=""

LOG="$DEMO/logs/castline.jsonl"
echo "== JSON logs: $LOG ($(wc -l <"$LOG") records; schema: Plugins/JSONSink/README.md). The last one:"
tail -n 1 "$LOG"
echo "== the simulated device fetched the sample with a Range request:"
python3 - "$DEMO/sim.log" <<'PY' || true
import sys
for line in open(sys.argv[1]):
    if "media fetched" in line:
        print(" ", line.strip()[:200])
PY
echo "== demo done: the cast reached PLAYING."
