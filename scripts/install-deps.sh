#!/usr/bin/env bash
# Installs what castline needs on Debian 12, only what is missing; silent when all is there.
#   C libraries:   libavahi-client-dev libsystemd-dev libjansson-dev libssl-dev libyaml-dev (+ pkg-config),
#                  libmosquitto-dev (linked by the MQTT bridge plugin only);
#                  libavformat-dev libavcodec-dev libavutil-dev (the media-formats plugin's container probe)
#   media tools:   ffmpeg (ffmpeg: remux/transcode per cast; ffprobe: the simulator judging media; tests make media with it)
#   code generator: protobuf-compiler
#   daemons used by integration tests: avahi-daemon dbus systemd (journald) iproute2 (netns),
#   mosquitto + mosquitto-clients (the MQTT fleet test's broker, mosquitto_sub/pub, mosquitto_passwd)
#   fleet operations: prometheus (promtool) + prometheus-alertmanager (the alerting end-to-end test);
#   systemd-journal-remote (journal-upload and journal-remote: the fleet-logs test);
#   dpkg-dev, lintian, mmdebstrap, patchelf (make deb: the plugins find their Swift runtime in the package; its clean-root install test)
#   end-to-end tools: tmux (live status view), jq (log-query benchmark peer), tcpdump (nearby capture test), chromium + fonts-dejavu-core
#   (renders the logs timeline page), valgrind (scripts/count-instructions.sh: instruction counts of the benchmarks)
#   conformance clients: VLC (vlc-bin + vlc-plugin-base: the Chromecast stream output), Python 3
#   with venv; pychromecast, catt and pytest from PyPI into .venv (Tests/Conformance/requirements.txt)
# Daemons are installed but never started by the package scripts: a temporary policy-rc.d
# forbids it (avahi must never come up on eth0; tests start their own, confined to lo/veth).
# Swift itself (6.x at /opt/swift or on PATH) is a prerequisite, not installed here.
set -euo pipefail

APT_PACKAGES=(
  pkg-config libavahi-client-dev libsystemd-dev libjansson-dev libssl-dev libyaml-dev libmosquitto-dev protobuf-compiler
  avahi-daemon avahi-utils dbus systemd iproute2 libseccomp2
  python3 python3-venv vlc-bin vlc-plugin-base util-linux gcc libc6-dev tmux jq chromium fonts-dejavu-core tcpdump valgrind
  curl wrk prometheus prometheus-alertmanager mosquitto mosquitto-clients
  dpkg-dev lintian mmdebstrap patchelf systemd-journal-remote
  ffmpeg libavformat-dev libavcodec-dev libavutil-dev
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    SUDO="sudo"
  fi
  echo "install-deps: installing ${missing[*]}"
  policy=/usr/sbin/policy-rc.d
  created_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    created_policy=1
  fi
  trap '[ $created_policy = 1 ] && $SUDO rm -f "$policy"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >/dev/null
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null || { echo "install-deps: swift not found on PATH (expected Swift 6.x, e.g. /opt/swift/usr/bin)" >&2; exit 1; }
for pc in avahi-client libsystemd jansson openssl; do
  pkg-config --exists "$pc" || { echo "install-deps: pkg-config cannot find $pc after install" >&2; exit 1; }
done

# Python conformance clients, pinned, in the repository's own virtual environment.
VENV="$(cd "$(dirname "$0")/.." && pwd)/.venv"
REQUIREMENTS="$(cd "$(dirname "$0")/.." && pwd)/Tests/Conformance/requirements.txt"
stamp="$VENV/.requirements"
if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$REQUIREMENTS" "$stamp"; then
  echo "install-deps: creating $VENV with $(grep -v '^#' "$REQUIREMENTS" | tr '\n' ' ')"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$stamp"
fi
