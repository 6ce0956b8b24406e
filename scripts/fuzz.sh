#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS seconds:  scripts/fuzz.sh {frame|payload|rules|glob|sim|pluginjson|config|logline|nearbytxt|deviceauth|pluginabi} SECONDS
# Builds Fuzz/ into .build-fuzz with -sanitize=fuzzer,address. Seeds come from Fuzz/seeds/TARGET
# (read only); new inputs go to .build-fuzz/corpus/TARGET, crashes to .build-fuzz/artifacts/.
# Any input slower than 2 s counts as a failure (-timeout=2): slowdowns are bugs here.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
SECONDS_TO_RUN=${2:-20}
SCRATCH=.build-fuzz
flags=(-c debug --package-path Fuzz --scratch-path "$SCRATCH" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING
       -Xcc -fsanitize=fuzzer-no-link,address -Xswiftc -use-ld=lld)
# SwiftPM reuses a cached build plan for a path dependency even after files were added to or
# removed from it, and then links a stale binary: drop the plan so it is always recomputed.
rm -f "$SCRATCH"/*.yaml "$SCRATCH"/*/*/description.json
swift build "${flags[@]}" --product castline-fuzz 2>&1 | grep -vE 'prohibited flag|^\[|Compiling|Building|Write|Emitting|Linking|Build complete' || true
BIN="$(swift build "${flags[@]}" --show-bin-path)/castline-fuzz"
[ -x "$BIN" ] || { echo "fuzz: build failed" >&2; exit 1; }
mkdir -p "$SCRATCH/corpus/$TARGET" "$SCRATCH/artifacts"
echo "fuzz: $TARGET for ${SECONDS_TO_RUN}s"
export SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0
set +e
"$BIN" "$TARGET" -max_total_time="$SECONDS_TO_RUN" -timeout=2 -max_len=8192 -print_final_stats=1 \
  -artifact_prefix="$SCRATCH/artifacts/$TARGET-" "$SCRATCH/corpus/$TARGET" "Fuzz/seeds/$TARGET" \
  >"$SCRATCH/fuzz-$TARGET.log" 2>&1
rc=$?
set -e
grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE' "$SCRATCH/fuzz-$TARGET.log" | sed "s/^/fuzz: $TARGET: /" || true
if [ $rc -ne 0 ]; then
  tail -40 "$SCRATCH/fuzz-$TARGET.log" >&2
  echo "fuzz: $TARGET FAILED (rc $rc); reproducer in $SCRATCH/artifacts/" >&2
  exit $rc
fi
echo "fuzz: $TARGET ok"
