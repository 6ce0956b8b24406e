#!/usr/bin/env bash
# Machine-independent cost of the hot paths: user-space instructions per operation, counted by
# valgrind (callgrind) on the release benchmarks. The VM's speed moves by 2x during a day; these
# counts do not, so they show what a change did even when the clock figures are noisy.
#
#   scripts/count-instructions.sh decode      # per decoded MEDIA_STATUS (frame + protobuf + model)
#   scripts/count-instructions.sh json-sink   # per 5-field record through the JSON sink to /dev/null
#
# Each figure is the difference of two runs of different lengths divided by the difference in
# operations, so start-up costs cancel out. Kernel work (write(2)) is not counted. Note: valgrind
# counts each byte of a `rep movsb` copy as an instruction, so large memcpy calls look costlier
# than they are (the JSON sink's batch copy adds ~750 "instructions" per record that way).
# Needs: valgrind (apt-get install valgrind), release builds (make bench / make bench-sinks build them).
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
command -v valgrind >/dev/null || { echo "count-instructions: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
bench_bin="$($SWIFT build -c release --package-path Benchmarks --show-bin-path)"
plugin_bin="$($SWIFT build -c release --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# valgrind 3.19 cannot read Swift 6's DWARF 5: counted on copies without debug info.
strip_copy() { cp "$1" "$work/$2"; strip -g "$work/$2"; }

# instructions <label> <operations in run A> <operations in run B> <command for A> <command for B>
instructions() {
    local a b
    a=$(eval "$4" 2>&1 | awk '/I *refs:/ {gsub(",", "", $4); print $4}')
    b=$(eval "$5" 2>&1 | awk '/I *refs:/ {gsub(",", "", $4); print $4}')
    [ -n "$a" ] && [ -n "$b" ] || { echo "count-instructions: valgrind gave no count for $1" >&2; exit 1; }
    echo "{\"name\":\"$1\",\"value\":$(( (b - a) / ($3 - $2) )),\"unit\":\"instructions/op\"}"
}

case "${1:-}" in
decode)
    strip_copy "$bench_bin/castline-bench" bench
    # 500,000 iterations x scale, 5 runs plus a 1/20 warm-up.
    ops() { local n; n=$(awk "BEGIN { printf \"%d\", 500000 * $1 }"); echo $(( n * 5 + n / 20 )); }
    run() { echo "CASTLINE_BENCH_SCALE=$1 valgrind --tool=callgrind --callgrind-out-file=/dev/null $work/bench decode.media_status"; }
    instructions decode.media_status.instructions "$(ops 0.002)" "$(ops 0.01)" "$(run 0.002)" "$(run 0.01)"
    ;;
json-sink)
    strip_copy "$bench_bin/castline-sink-bench" sink-bench
    mkdir -m 755 "$work/plugins"
    strip_copy "$plugin_bin/libCastlinePluginJSONSink.so" plugins/libCastlinePluginJSONSink.so
    # 2,000,000 records x scale (at least 4,096), whole batches of 256, 4 runs.
    ops() { local n; n=$(awk "BEGIN { n = int(2000000 * $1); if (n < 4096) n = 4096; printf \"%d\", n }"); echo $(( 4 * ((n + 255) / 256 * 256) )); }
    # Counted inside the sink's `take` only (the benchmark's untimed batch copies are left out).
    run() { echo "CASTLINE_BENCH_ONLY=dev-null CASTLINE_BENCH_SCALE=$1 valgrind --tool=callgrind --toggle-collect='*LogSinkC4take*' --callgrind-out-file=/dev/null $work/sink-bench json $work/plugins $work"; }
    instructions json-sink.dev-null.instructions "$(ops 0.01)" "$(ops 0.05)" "$(run 0.01)" "$(run 0.05)"
    ;;
*)
    echo "usage: scripts/count-instructions.sh decode|json-sink" >&2
    exit 64
    ;;
esac
