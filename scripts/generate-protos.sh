#!/usr/bin/env bash
# Regenerates Sources/CastProtoReference/Generated/*.pb.swift from Protos/*.proto with Debian's protoc
# and protoc-gen-swift built from the swift-protobuf version this package resolves.
#   scripts/generate-protos.sh          rewrite the generated files
#   scripts/generate-protos.sh --check  exit 1 if the committed files differ from a fresh generation
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=Sources/CastProtoReference/Generated
command -v protoc >/dev/null || { echo "generate-protos: protoc missing (apt-get install protobuf-compiler)" >&2; exit 2; }
swift build --product protoc-gen-swift >/dev/null
PLUGIN="$(swift build --show-bin-path)/protoc-gen-swift"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
protoc --plugin=protoc-gen-swift="$PLUGIN" --swift_out=Visibility=Package:"$TMP" -I Protos Protos/*.proto
if [ "${1:-}" = "--check" ]; then
  . scripts/check-generated.sh
  check_generated generate-protos "$OUT" "$TMP" "is stale; run scripts/generate-protos.sh and commit"
else
  mkdir -p "$OUT"
  rm -f "$OUT"/*.pb.swift
  cp "$TMP"/*.pb.swift "$OUT"/
  echo "generate-protos: wrote $(ls "$TMP" | tr '\n' ' ')"
fi
