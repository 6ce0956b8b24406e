#!/usr/bin/env bash
# Builds castline_<version>_amd64.deb with dpkg-deb from release builds already made by
# `make deb` (castline with --static-swift-stdlib, the first-party plugins), then runs lintian.
#   scripts/build-deb.sh BIN_DIR OUT_DIR
# Contents (docs/testing.md, "The Debian package"): /usr/bin/castline (the Swift runtime linked
# in); the plugins in /usr/lib/castline/plugins (the folder castline treats as first-party:
# <binary>/../lib/castline/plugins) with the Swift runtime libraries they load in
# /usr/lib/castline/swift (SwiftPM links a dynamic library against the shared runtime even with
# --static-swift-stdlib; their RUNPATH becomes $ORIGIN/../swift); the systemd unit,
# sysusers.d and tmpfiles.d entries; /etc/castline/castline.yaml (a conffile); man pages
# generated from --help (swift-argument-parser's generate-manual); bash, zsh and fish
# completions; the plugin SDK (header and castline-plugin.pc); the alerting rules.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$1" && pwd)"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
swift="${SWIFT:-swift}"
version="$(grep -o 'static let string = "[^"]*"' "$root/Sources/CastlineDaemon/ControlPlane.swift" | cut -d'"' -f2)"
arch=amd64
name="castline_${version}_${arch}"
stage="$out/$name"
# The first-party plugins (the example channels PingChannel and EchoChannelC stay out).
plugins=(JSONSink MediaFormats JournaldSink AvahiDiscovery WebPages MQTTBridge)
# The commit's date, so two builds of one commit give the same man pages and changelog.
date="$(git -C "$root" log -1 --format=%cd --date=format:%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)"

rm -rf "$stage"
install -d "$stage/DEBIAN" "$stage/usr/bin" "$stage/usr/lib/castline/plugins" "$stage/lib/systemd/system" \
  "$stage/usr/lib/sysusers.d" "$stage/usr/lib/tmpfiles.d" "$stage/etc/castline" "$stage/usr/share/man/man1" \
  "$stage/usr/share/bash-completion/completions" "$stage/usr/share/zsh/vendor-completions" \
  "$stage/usr/share/fish/vendor_completions.d" "$stage/usr/include/castline" "$stage/usr/lib/x86_64-linux-gnu/pkgconfig" \
  "$stage/usr/share/doc/castline/examples" "$stage/usr/share/castline/prometheus"

install -m 0755 "$bin/castline" "$stage/usr/bin/castline"
patchelf --remove-rpath "$stage/usr/bin/castline"
install -d "$stage/usr/lib/castline/swift"
for p in "${plugins[@]}"; do
  so="$stage/usr/lib/castline/plugins/libCastlinePlugin$p.so"
  install -m 0644 "$bin/libCastlinePlugin$p.so" "$so"
  # The toolchain's Swift libraries this plugin loads, copied once each.
  ldd "$so" | awk '$3 ~ /\/usr\/lib\/swift\// { print $3 }' | while read -r lib; do
    [ -e "$stage/usr/lib/castline/swift/$(basename "$lib")" ] || install -m 0644 "$lib" "$stage/usr/lib/castline/swift/"
  done
  patchelf --set-rpath '$ORIGIN/../swift' "$so"
done
for lib in "$stage"/usr/lib/castline/swift/*.so; do patchelf --set-rpath '$ORIGIN' "$lib"; done
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$stage/usr/bin/castline" "$stage"/usr/lib/castline/plugins/*.so \
  "$stage"/usr/lib/castline/swift/*.so

# The unit runs the packaged binary.
sed -e 's|/usr/local/bin/castline|/usr/bin/castline|' -e 's|^# Install: .*|# Installed by the castline package; enable with: systemctl enable --now castline|' \
    -e '/^#          systemctl enable --now castline$/d' "$root/configs/castline.service" > "$stage/lib/systemd/system/castline.service"
chmod 0644 "$stage/lib/systemd/system/castline.service"
install -m 0644 "$root/configs/debian/castline.sysusers" "$stage/usr/lib/sysusers.d/castline.conf"
install -m 0644 "$root/configs/debian/castline.tmpfiles" "$stage/usr/lib/tmpfiles.d/castline.conf"
install -m 0644 "$root/configs/debian/castline.yaml" "$stage/etc/castline/castline.yaml"
install -m 0644 "$root/configs/castline.example.yaml" "$stage/usr/share/doc/castline/examples/castline.example.yaml"
install -m 0644 "$root/configs/prometheus/castline-alerts.yml" "$stage/usr/share/castline/prometheus/castline-alerts.yml"
# castline's receiver page, for operators to host (docs/receiver.md).
install -d "$stage/usr/share/castline/receiver"
install -m 0644 "$root/receiver/castline-receiver.html" "$root/receiver/silence.wav" "$stage/usr/share/castline/receiver/"

# Man pages from the commands' --help (one page a subcommand), with ArgumentParser's own tool.
"$swift" build -c release --package-path "$root/.build/checkouts/swift-argument-parser" --scratch-path "$root/.build/generate-manual" \
  --product generate-manual >/dev/null
manual="$("$swift" build -c release --package-path "$root/.build/checkouts/swift-argument-parser" --scratch-path "$root/.build/generate-manual" --show-bin-path)/generate-manual"
"$manual" "$stage/usr/bin/castline" --multi-page --date "$date" --output-directory "$stage/usr/share/man/man1"
gzip -9n "$stage"/usr/share/man/man1/*.1
chmod 0644 "$stage"/usr/share/man/man1/*

# (bash-completion sources the file: no #! line.)
"$stage/usr/bin/castline" --generate-completion-script bash | sed '1{/^#!/d}' > "$stage/usr/share/bash-completion/completions/castline"
"$stage/usr/bin/castline" --generate-completion-script zsh > "$stage/usr/share/zsh/vendor-completions/_castline"
"$stage/usr/bin/castline" --generate-completion-script fish > "$stage/usr/share/fish/vendor_completions.d/castline.fish"

install -m 0644 "$root/SDK/Sources/CCastPluginABI/include/castline_plugin.h" "$stage/usr/include/castline/castline_plugin.h"
sed "s|@PREFIX@|/usr|" "$root/SDK/Sources/CCastPluginABI/castline-plugin.pc.in" > "$stage/usr/lib/x86_64-linux-gnu/pkgconfig/castline-plugin.pc"
chmod 0644 "$stage/usr/lib/x86_64-linux-gnu/pkgconfig/castline-plugin.pc"

install -m 0644 "$root/configs/debian/copyright" "$stage/usr/share/doc/castline/copyright"
printf 'castline (%s) unstable; urgency=medium\n\n  * Built from the castline tree (%s).\n\n -- castline maintainers <castline@example.org>  %s\n' \
  "$version" "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  "$(date -u -d "$date" -R)" | gzip -9n > "$stage/usr/share/doc/castline/changelog.gz"
chmod 0644 "$stage/usr/share/doc/castline/changelog.gz"

# Control: the shared libraries castline and its plugins link, as dpkg-shlibdeps reads them.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/debian"
printf 'Source: castline\n\nPackage: castline\nArchitecture: amd64\n' > "$tmp/debian/control"
depends="$(cd "$tmp" && dpkg-shlibdeps -O --ignore-missing-info -l"$stage/usr/lib/castline/swift" -e"$stage/usr/bin/castline" \
  $(for f in "$stage"/usr/lib/castline/plugins/*.so "$stage"/usr/lib/castline/swift/*.so; do printf -- '-e%s ' "$f"; done) 2>"$tmp/shlibdeps.log" \
  | sed -n 's/^shlibs:Depends=//p')"
[ -n "$depends" ] || { cat "$tmp/shlibdeps.log" >&2; echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
sed -e "s|@VERSION@|$version|" -e "s|@DEPENDS@|$depends|" -e "s|@SIZE@|$size|" "$root/configs/debian/control.in" > "$stage/DEBIAN/control"
install -m 0644 "$root/configs/debian/conffiles" "$stage/DEBIAN/conffiles"
install -m 0755 "$root/configs/debian/postinst" "$root/configs/debian/postrm" "$stage/DEBIAN/"
(cd "$stage" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums" "$stage/DEBIAN/control"

find "$stage" -type d -exec chmod 0755 {} +
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/$name.deb" >/dev/null
echo "built $out/$name.deb ($(du -k "$out/$name.deb" | cut -f1) KiB; installed size $size KiB)"
# lintian: errors fail the build; warnings are printed.
lintian --fail-on error --suppress-tags-from-file "$root/configs/debian/lintian-overrides" "$out/$name.deb"
