#!/usr/bin/env bash
# `make format-lint`: the files listed in .swift-format-files against .swift-format (4 spaces,
# 150 columns, ordered imports), with swift-format from the toolchain; any finding fails.
# `scripts/format-lint.sh --fix` formats them in place instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
mapfile -t files < <(grep -v '^\s*\(#\|$\)' .swift-format-files)
missing=0
for f in "${files[@]}"; do [ -f "$f" ] || { echo "format-lint: $f is listed in .swift-format-files but does not exist"; missing=1; }; done
[ "$missing" = 0 ] || exit 1
if [ "${1:-}" = "--fix" ]; then
  exec "${SWIFT:-swift}" format --in-place "${files[@]}"
fi
"${SWIFT:-swift}" format lint --strict "${files[@]}"
echo "format-lint: ${#files[@]} files match .swift-format"
