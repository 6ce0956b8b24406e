#!/usr/bin/env bash
# `make plugin-memcheck [PLUGIN=FILE] [SCRIPT=FILE]`: a channel plugin under valgrind's memcheck,
# driven by castline-plugin-harness (`castline plugins test --in-process` as a program valgrind
# 3.19 can run). Without PLUGIN: both example plugins with their harness scripts, then a plugin
# with a deliberate heap over-read, which memcheck must catch (so a clean run means something).
# The harness is copied without its debug info (valgrind 3.19 cannot read the DWARF Swift
# writes: "Possibly corrupted debuginfo"); the plugin keeps its own, so its frames have lines.
# scripts/valgrind-plugin.supp holds the runtime's false positives, each explained; none names
# a plugin. Exits 1 when a plugin has a memory error or fails a step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
swift="${SWIFT:-swift}"
cd "$root"
"$swift" build --product castline-plugin-harness >/dev/null
"$swift" build --product CastlinePluginPingChannel >/dev/null
"$swift" build --product CastlinePluginEchoChannelC >/dev/null
bin="$("$swift" build --show-bin-path)"
work="$(mktemp -d)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$bin/castline-plugin-harness" "$work/harness"

# memcheck NAME EXPECTED_EXIT PLUGIN [HARNESS ARGS…]: one run; its log is kept on failure.
failed=0
memcheck() {
  local name="$1" expected="$2"; shift 2
  local start rc=0
  start=$(date +%s)
  valgrind --error-exitcode=99 --num-callers=30 --suppressions="$root/scripts/valgrind-plugin.supp" \
    --log-file="$work/$name.valgrind" "$work/harness" "$@" > "$work/$name.out" 2>&1 || rc=$?
  local errors
  errors="$(grep -o 'ERROR SUMMARY: [0-9]* errors' "$work/$name.valgrind" | tail -1)"
  echo "$name: exit $rc (expected $expected), $errors, $(( $(date +%s) - start )) s"
  if [ "$rc" != "$expected" ]; then
    failed=1
    cat "$work/$name.out"
    grep -v '^==[0-9]*== *$' "$work/$name.valgrind" | head -60
  fi
}

if [ -n "${PLUGIN:-}" ]; then
  memcheck "$(basename "$PLUGIN" .so)" 0 "$PLUGIN" ${SCRIPT:+--script "$SCRIPT"}
  exit "$failed"
fi
memcheck ping-channel 0 "$bin/libCastlinePluginPingChannel.so" --script Plugins/PingChannel/harness.json
memcheck echo-channel-c 0 "$bin/libCastlinePluginEchoChannelC.so" --script Plugins/EchoChannelC/harness.json

# The control: one byte read past a malloc'd buffer in `command`. memcheck must name it.
cat > "$work/overread.c" <<'C'
#include <castline_plugin.h>
#include <stdlib.h>
#include <string.h>
typedef struct { const castline_host_services *host; castline_host_ctx *ctx; } state;
static int32_t bad_open(void *u, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                        const char *session, void **out, castline_error_buffer error) {
    (void)u; (void)config; (void)session; (void)error;
    state *s = calloc(1, sizeof *s); s->host = host; s->ctx = ctx; *out = s; return CASTLINE_OK;
}
static void bad_on_message(void *st, const char *ns, const char *src, const char *p, size_t n) { (void)st; (void)ns; (void)src; (void)p; (void)n; }
static void bad_command(void *st, uint64_t id, const char *json, size_t n) {
    state *s = st; (void)json;
    char *copy = malloc(n);
    memcpy(copy, json, n);
    volatile char past = copy[n];   /* one byte past the end */
    (void)past;
    free(copy);
    s->host->complete_command(s->ctx, id, CASTLINE_OK, "{}");
}
static void bad_close(void *st) { free(st); }
static const char *const namespaces[] = {"urn:x-cast:org.castline.test", NULL};
static const castline_channel_vtable vtable = {.version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable),
    .namespaces = namespaces, .open = bad_open, .on_message = bad_on_message, .command = bad_command, .close = bad_close};
static const castline_feature features[] = {{CASTLINE_FEATURE_CHANNEL, 0, "overread", &vtable, NULL}};
CASTLINE_PLUGIN_DEFINE("overread", "1.0", "reads past a buffer", "Apache-2.0", NULL, NULL, features, CASTLINE_FEATURE_COUNT(features))
C
cc -g -O0 -shared -fPIC -I "$root/SDK/Sources/CCastPluginABI/include" "$work/overread.c" -o "$work/liboverread.so"
memcheck overread 99 "$work/liboverread.so"
if ! grep -q "Invalid read of size 1" "$work/overread.valgrind" || ! grep -q "bad_command (overread.c" "$work/overread.valgrind"; then
  echo "overread: memcheck did not name the over-read in bad_command"
  failed=1
fi
exit "$failed"
