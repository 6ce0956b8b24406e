#!/usr/bin/env bash
# Regenerates docs/api/openapi.yaml from the route table (Sources/CastlineDaemon/ControlRoutes+*.swift)
# and docs/api/openapi.template.yaml, with the built `castline api openapi`.
#   scripts/generate-openapi.sh          rewrite the document
#   scripts/generate-openapi.sh --check  exit 1, with the diff, if the committed document differs from a fresh generation
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=docs/api/openapi.yaml
swift build --product castline >/dev/null
CASTLINE="$(swift build --show-bin-path)/castline"
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
"$CASTLINE" api openapi --template docs/api/openapi.template.yaml >"$TMP"
if [ "${1:-}" = "--check" ]; then
  . scripts/check-generated.sh
  check_generated generate-openapi "$OUT" "$TMP" "differs from the route table; run make openapi and commit (edit the table or the template, not the document)"
else
  cp "$TMP" "$OUT"
  echo "generate-openapi: wrote $OUT"
fi
