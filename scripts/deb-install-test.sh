#!/usr/bin/env bash
# The clean-root install test of the Debian package (needs root):
#   scripts/deb-install-test.sh DEB [CACHE_DIR]
# 1. mmdebstrap builds a minimal Debian 12 root (variant apt) from the archive this machine's own
#    apt sources name, cached as a tarball in CACHE_DIR (default .build/deb-root);
# 2. a fresh copy of it installs the package with `apt-get install ./castline_….deb` (apt fetches
#    its dependencies from the same archive) in a chroot, without systemd;
# 3. in a network namespace of its own (loopback only: nothing castline does leaves it), inside
#    the root: castline --version, castline sim, castline cast to it, castline doctor;
# 4. prints the package's installed size and each step's time, and removes the root.
set -euo pipefail
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
deb="$(readlink -f "$1")"
cache="${2:-$root_dir/.build/deb-root}"
tarball="$cache/bookworm-apt.tar"
[ "$(id -u)" = 0 ] || { echo "deb-install-test: needs root (chroot, mounts, a network namespace)" >&2; exit 1; }
mkdir -p "$cache"
t0=$(date +%s.%N)
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

if [ ! -s "$tarball" ]; then
  sources=(/etc/apt/sources.list.d/*.sources)
  [ -e "${sources[0]}" ] || sources=(/etc/apt/sources.list)
  # The host's own apt sources (deb822 or one-line), pasted into the new root's sources.
  mmdebstrap --quiet --variant=apt --include=ca-certificates bookworm "$cache/bookworm-apt.partial.tar" "${sources[@]}"
  mv "$cache/bookworm-apt.partial.tar" "$tarball"
  echo "deb-install-test: built the Debian 12 root in $(elapsed "$t0") s ($(du -m "$tarball" | cut -f1) MB, cached at $tarball)"
fi

work="$(mktemp -d /tmp/castline-deb-root.XXXXXX)"
ns="castline-deb-$$"
sim_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
rootfs="$work/root"
mkdir "$rootfs"
t1=$(date +%s.%N)
tar -C "$rootfs" -xf "$tarball"
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
cp "$deb" "$rootfs/tmp/"
name="$(basename "$deb")"

# In the chroot with /proc and /dev, in a mount namespace of its own (nothing leaks to the host).
in_root() { unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && r="$1" && shift && exec chroot "$r" "$@"' sh "$rootfs" "$@"; }
in_root env DEBIAN_FRONTEND=noninteractive apt-get -qq update
in_root env DEBIAN_FRONTEND=noninteractive apt-get -y -qq install "/tmp/$name" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; exit 1; }
echo "deb-install-test: apt-get install ./$name in a clean root: $(elapsed "$t1") s"
installed="$(in_root dpkg-query -W -f='${Installed-Size}' castline)"
files="$(in_root sh -c 'dpkg -L castline | while read -r f; do [ -f "$f" ] && echo "$f"; done | xargs du -ck | tail -1 | cut -f1')"
echo "deb-install-test: installed size ${installed} KiB (Installed-Size), ${files} KiB of files; dependencies pulled: $(grep -c '^Setting up' "$work/apt.log" || true) packages"
in_root test -x /usr/bin/castline
in_root test -f /usr/lib/castline/plugins/libCastlinePluginMQTTBridge.so
in_root getent passwd castline >/dev/null
in_root sh -c 'dpkg-query -W -f="\${Conffiles}" castline | grep -q /etc/castline/castline.yaml'

# castline in the root, in a namespace with only loopback.
ip netns add "$ns"
ip -n "$ns" link set lo up
in_ns() { ip netns exec "$ns" unshare --mount --fork sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && r="$1" && shift && exec chroot "$r" "$@"' sh "$rootfs" "$@"; }
version="$(in_ns castline --version)"
echo "deb-install-test: castline --version: $version"
in_ns castline config check /etc/castline/castline.yaml
in_ns castline sim --no-mdns --name "Root TV" >"$work/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do grep -q '"devices"' "$work/sim.log" 2>/dev/null && break; sleep 0.1; done
grep -q '"devices"' "$work/sim.log" || { echo "castline sim did not come up:"; cat "$work/sim.log"; exit 1; }
cast="$(in_ns castline cast http://media.invalid/root.mp4 --device 127.0.0.1:8009 --json)"
echo "$cast" | grep -q '"PLAYING"' || { echo "castline cast did not play: $cast"; exit 1; }
echo "deb-install-test: castline cast to castline sim inside the root: PLAYING"
# doctor: its checks that need avahi or D-Bus fail in a bare root; it must run and report.
in_ns castline doctor --config /etc/castline/castline.yaml >"$work/doctor.log" 2>&1 || true
# The Swift plugins load with the runtime the package ships (no toolchain in the root).
grep -q "plugins: .*mqtt-bridge.*web-pages" "$work/doctor.log" || { echo "castline doctor did not load the plugins:"; cat "$work/doctor.log"; exit 1; }
echo "deb-install-test: castline doctor ran ($(wc -l <"$work/doctor.log") lines; its first lines:)"
head -5 "$work/doctor.log" | sed 's/^/  /'
echo "deb-install-test: passed in $(elapsed "$t0") s"
