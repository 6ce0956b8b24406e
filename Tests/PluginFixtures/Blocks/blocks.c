/*
 * Test fixture: a channel and a log sink that block inside their callbacks, so the tests can
 * check the host's time bound on every call into a plugin.
 *
 * channel "test-blocking-channel" (urn:x-cast:org.castline.test):
 *   command {"do": "poke"} → sends {"type":"PING"} on its namespace and completes {"sent": <rc>};
 *   on_message → sleeps block_ms (the plugin's config {"block_ms": N}, default 60000) before it
 *   returns, once per message.
 * log sink "test-blocking-sink": write → sleeps block_ms (its options {"block_ms": N}) per call;
 *   counts the records it was handed (dropped() reports 0: it loses nothing of its own).
 * discovery "test-blocking-discovery": start returns at once; stop sleeps block_ms (the plugin's
 *   config).
 * media format "test-blocking-format" (application/x-blocking): probe sleeps block_ms (the
 *   plugin's config) and then reports {"content_type": "application/x-blocking"}.
 *
 * The sleep ends by itself, so a test process never keeps a thread blocked for ever.
 */
#include <castline_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_NS "urn:x-cast:org.castline.test"

static const castline_host_services *g_host;
static long g_block_ms = 60000;

static long block_ms_of(const char *json) {
    const char *at = json ? strstr(json, "\"block_ms\"") : NULL;
    if (!at) return 60000;
    at = strchr(at, ':');
    return at ? strtol(at + 1, NULL, 10) : 60000;
}

static void block_for(long ms) {
    struct timespec t = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {}
}

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)ctx; (void)error;
    g_host = host;
    g_block_ms = block_ms_of(config);
    return CASTLINE_OK;
}

/* channel */
typedef struct { castline_host_ctx *ctx; long block_ms; } channel_state;

static int32_t channel_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)session; (void)error;
    channel_state *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    s->block_ms = block_ms_of(config);
    *out = s;
    return CASTLINE_OK;
}

static void channel_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)ns; (void)source; (void)payload; (void)length;
    channel_state *s = state;
    block_for(s->block_ms);
}

static void channel_command(void *state, uint64_t id, const char *json, size_t length) {
    (void)length;
    channel_state *s = state;
    if (strstr(json, "\"poke\"")) {
        char text[32];
        snprintf(text, sizeof text, "{\"sent\":%d}", g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"PING\",\"requestId\":1}"));
        g_host->complete_command(s->ctx, id, CASTLINE_OK, text);
    } else {
        g_host->complete_command(s->ctx, id, CASTLINE_ERR_INVALID_ARGUMENT, "unknown command");
    }
}

static void channel_close(void *state) { free(state); }

static const char *const namespaces[] = {TEST_NS, NULL};
static const castline_channel_vtable channel_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable),
    .namespaces = namespaces, .open = channel_open, .on_message = channel_on_message,
    .command = channel_command, .close = channel_close,
};

/* discovery */
typedef struct { long block_ms; } discovery_state;

static int32_t discovery_start(void *userdata, const castline_host_services *host, castline_host_ctx *ctx,
                               const char *config, const char *app_ids, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)ctx; (void)app_ids; (void)error;
    discovery_state *s = calloc(1, sizeof *s);
    s->block_ms = block_ms_of(config);
    *out = s;
    return CASTLINE_OK;
}

static void discovery_stop(void *state) {
    discovery_state *s = state;
    block_for(s->block_ms);
    free(s);
}

static const char *const service_types[] = {"_googlecast._tcp", NULL};
static const castline_discovery_vtable discovery_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_discovery_vtable),
    .service_types = service_types, .start = discovery_start, .stop = discovery_stop,
};

/* log sink */
typedef struct { long block_ms; unsigned long long handed; } sink_state;

static int32_t sink_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                         void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)ctx; (void)error;
    sink_state *s = calloc(1, sizeof *s);
    s->block_ms = block_ms_of(config);
    *out = s;
    return CASTLINE_OK;
}

static void sink_write(void *state, const castline_log_record *records, size_t count) {
    (void)records;
    sink_state *s = state;
    s->handed += count;
    block_for(s->block_ms);
}

static void sink_close(void *state) { free(state); }

static const castline_log_sink_vtable sink_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_log_sink_vtable),
    .open = sink_open, .write = sink_write, .close = sink_close,
};

/* media format */
static int32_t format_probe(void *userdata, const char *url, const char *content_type, const uint8_t *body, size_t body_length,
                            castline_json_emit_fn emit, void *emit_ctx, castline_error_buffer error) {
    (void)userdata; (void)url; (void)content_type; (void)body; (void)body_length; (void)error;
    block_for(g_block_ms);
    static const char report[] = "{\"content_type\":\"application/x-blocking\"}";
    emit(emit_ctx, report, sizeof report - 1);
    return CASTLINE_OK;
}

static const char *const content_types[] = {"application/x-blocking", NULL};
static const castline_media_format_vtable format_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_media_format_vtable),
    .content_types = content_types, .probe = format_probe,
};

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_CHANNEL, .rank = 0, .id = "test-blocking-channel", .vtable = &channel_vtable},
    {.kind = CASTLINE_FEATURE_LOG_SINK, .rank = 0, .id = "test-blocking-sink", .vtable = &sink_vtable},
    {.kind = CASTLINE_FEATURE_DISCOVERY, .rank = 0, .id = "test-blocking-discovery", .vtable = &discovery_vtable},
    {.kind = CASTLINE_FEATURE_MEDIA_FORMAT, .rank = 0, .id = "test-blocking-format", .vtable = &format_vtable},
};

CASTLINE_PLUGIN_DEFINE("test-blocks", "1.0", "blocks in on_message, in write, in stop and in probe", "Apache-2.0", init, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
