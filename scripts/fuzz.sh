#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS seconds:  scripts/fuzz.sh {frame|payload|rules|glob|sim|pluginjson|config|logline|nearbytxt|deviceauth|pluginabi} SECONDS
# (scripts/fuzz.sh --build-only: only builds.)
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
# FUZZ_BUILT=1: the target was built just before (make fuzz-smoke builds once for all targets;
# each plan and build costs ~20 s even with nothing to compile).
if [ "${FUZZ_BUILT:-0}" != 1 ]; then
  # SwiftPM reuses a cached build plan for a path dependency even after files were added to or
  # removed from it, and then links a stale binary: drop the plan so it is always recomputed.
  rm -f "$SCRATCH"/*.yaml "$SCRATCH"/*/*/description.json
  mkdir -p "$SCRATCH"
  if ! swift build "${flags[@]}" --product castline-fuzz >"$SCRATCH/build.log" 2>&1; then
    grep -vE 'prohibited flag|^\[|Compiling|Building|Write|Emitting|Linking' "$SCRATCH/build.log" | tail -40 >&2
    echo "fuzz: build failed" >&2
    exit 1
  fi
fi
BIN="$SCRATCH/debug/castline-fuzz"
[ -x "$BIN" ] || BIN="$(swift build "${flags[@]}" --show-bin-path)/castline-fuzz"
if [ "$TARGET" = --build-only ]; then
  [ -x "$BIN" ] || { echo "fuzz: build failed" >&2; exit 1; }
  exit 0
fi
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
