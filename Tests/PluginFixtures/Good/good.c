/*
 * Test fixture: a well-formed C plugin with a discovery feature and a channel feature that
 * misbehave on request, so the tests can check each runtime refusal of the host.
 *
 * discovery "test-discovery": on start reports one valid device, then one invalid JSON text.
 * channel "test-channel" (urn:x-cast:org.castline.test): command {"do": "..."}
 *   "undeclared" → sends on urn:x-cast:org.castline.other, completes {"status": <rc>}
 *   "badjson"    → sends "{oops" on its namespace, completes {"status": <rc>}
 *   "echo"       → sends {"type":"PING"} on its namespace and completes with the next message
 *   "reply-badjson" → completes with "not json" (the host fails the command)
 */
#include <castline_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const castline_host_services *g_host;

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)error;
    g_host = host;
    castline_field fields[1] = {{.key = "config", .key_length = 6, .value_type = CASTLINE_VALUE_STRING,
                                 .string = config, .string_length = strlen(config)}};
    host->log(ctx, CASTLINE_LEVEL_INFO, "TestPluginGood", "test-good initialised", fields, 1, __FILE__, __LINE__, __func__);
    return CASTLINE_OK;
}

/* discovery */
typedef struct { castline_host_ctx *ctx; } discovery_state;

static int32_t discovery_start(void *userdata, const castline_host_services *host, castline_host_ctx *ctx,
                               const char *config, const char *app_ids, void **out, castline_error_buffer error) {
    (void)userdata; (void)config; (void)app_ids; (void)error;
    discovery_state *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    const char *good = "{\"id\":\"0123456789abcdef0123456789abcdef\",\"name\":\"Fixture TV\",\"host\":\"127.0.0.1\",\"port\":8009,\"model\":\"Chromecast\"}";
    host->device_found(ctx, good);
    const char *bad = "{\"id\": \"broken\", \"name\": ";
    host->device_found(ctx, bad);
    *out = s;
    return CASTLINE_OK;
}

static void discovery_stop(void *state) { free(state); }

static const char *const service_types[] = {"_googlecast._tcp", NULL};
static const castline_discovery_vtable discovery_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_discovery_vtable),
    .service_types = service_types, .start = discovery_start, .stop = discovery_stop,
};

/* channel */
#define TEST_NS "urn:x-cast:org.castline.test"
typedef struct { castline_host_ctx *ctx; uint64_t waiting; } channel_state;

static int32_t channel_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)config; (void)session; (void)error;
    channel_state *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    *out = s;
    return CASTLINE_OK;
}

static void channel_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)ns; (void)source; (void)length;
    channel_state *s = state;
    if (s->waiting) {
        uint64_t id = s->waiting;
        s->waiting = 0;
        g_host->complete_command(s->ctx, id, CASTLINE_OK, payload);
    }
}

static void complete_status(channel_state *s, uint64_t id, int32_t rc) {
    char text[64];
    snprintf(text, sizeof text, "{\"status\":%d}", rc);
    g_host->complete_command(s->ctx, id, CASTLINE_OK, text);
}

static void channel_command(void *state, uint64_t id, const char *json, size_t length) {
    (void)length;
    channel_state *s = state;
    if (strstr(json, "\"reply-badjson\"")) {
        g_host->complete_command(s->ctx, id, CASTLINE_OK, "not json");
    } else if (strstr(json, "\"undeclared\"")) {
        complete_status(s, id, g_host->send_message(s->ctx, "urn:x-cast:org.castline.other", NULL, "{}"));
    } else if (strstr(json, "\"badjson\"")) {
        complete_status(s, id, g_host->send_message(s->ctx, TEST_NS, NULL, "{oops"));
    } else if (strstr(json, "\"echo\"")) {
        s->waiting = id;
        const char *ping = "{\"type\":\"PING\",\"requestId\":1}";
        int32_t rc = g_host->send_message(s->ctx, TEST_NS, NULL, ping);
        if (rc != CASTLINE_OK) {
            s->waiting = 0;
            g_host->complete_command(s->ctx, id, CASTLINE_ERR_FAILED, "send failed");
        }
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

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_DISCOVERY, .rank = 0, .id = "test-discovery", .vtable = &discovery_vtable},
    {.kind = CASTLINE_FEATURE_CHANNEL, .rank = 0, .id = "test-channel", .vtable = &channel_vtable},
};

CASTLINE_PLUGIN_DEFINE("test-good", "1.0", "well-formed fixture that misbehaves on request", "Apache-2.0", init, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
