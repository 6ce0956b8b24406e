#!/usr/bin/env bash
# Installs the plugin ABI header and castline-plugin.pc so C plugins can be built outside the tree:
#   scripts/install-plugin-sdk.sh [PREFIX]          (default /usr/local)
#   cc -shared -fPIC my_plugin.c $(pkg-config --cflags castline-plugin) -o libmy_plugin.so
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${1:-/usr/local}"
install -d "$prefix/include/castline" "$prefix/lib/pkgconfig"
install -m 0644 "$root/SDK/Sources/CCastPluginABI/include/castline_plugin.h" "$prefix/include/castline/castline_plugin.h"
sed "s|@PREFIX@|$prefix|" "$root/SDK/Sources/CCastPluginABI/castline-plugin.pc.in" > "$prefix/lib/pkgconfig/castline-plugin.pc"
chmod 0644 "$prefix/lib/pkgconfig/castline-plugin.pc"
echo "installed castline_plugin.h and castline-plugin.pc under $prefix (PKG_CONFIG_PATH=$prefix/lib/pkgconfig)"
