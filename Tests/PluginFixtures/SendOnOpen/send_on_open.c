/*
 * Test fixture: a channel plugin that sends from inside its open callback, to every kind of
 * destination, and reports what the host answered and what came back.
 *
 * channel "test-open-send" (urn:x-cast:org.castline.test), in open:
 *   {"type":"HELLO","n":1} to NULL (the app), {"type":"HELLO","n":2} to the transport_id of
 *   session_json (when it has one), {"type":"HELLO","n":3} to "receiver-0",
 *   {"type":"HELLO","n":4} to "sender-0" (neither the app nor the platform);
 * command (any) → {"app":rc,"transport":rc,"receiver":rc,"other":rc,"messages":[…]}: the
 *   statuses (-1: not attempted) and the messages received so far, oldest first (at most 8).
 */
#include <castline_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_NS "urn:x-cast:org.castline.test"
#define MAX_MESSAGES 8

typedef struct {
    const castline_host_services *host;
    castline_host_ctx *ctx;
    int32_t app, transport, receiver, other;
    char *messages[MAX_MESSAGES];
    int count;
} state_t;

static int32_t send_hello(state_t *s, const char *destination, int n) {
    char text[64];
    snprintf(text, sizeof text, "{\"type\":\"HELLO\",\"n\":%d}", n);
    return s->host->send_message(s->ctx, TEST_NS, destination, text);
}

/* The value of "transport_id" in session_json, copied into out (empty when absent). */
static void transport_id(const char *session, char *out, size_t capacity) {
    out[0] = 0;
    const char *key = strstr(session, "\"transport_id\":\"");
    if (!key) return;
    key += strlen("\"transport_id\":\"");
    const char *end = strchr(key, '"');
    if (!end || (size_t)(end - key) >= capacity) return;
    memcpy(out, key, (size_t)(end - key));
    out[end - key] = 0;
}

static int32_t open_channel(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)config; (void)error;
    state_t *s = calloc(1, sizeof *s);
    s->host = host;
    s->ctx = ctx;
    s->transport = -1;
    s->app = send_hello(s, NULL, 1);
    char transport[128];
    transport_id(session, transport, sizeof transport);
    if (transport[0]) s->transport = send_hello(s, transport, 2);
    s->receiver = send_hello(s, "receiver-0", 3);
    s->other = send_hello(s, "sender-0", 4);
    *out = s;
    return CASTLINE_OK;
}

static void on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)ns; (void)source;
    state_t *s = state;
    if (s->count == MAX_MESSAGES) return;
    s->messages[s->count] = malloc(length + 1);
    memcpy(s->messages[s->count], payload, length);
    s->messages[s->count][length] = 0;
    s->count++;
}

static void command(void *state, uint64_t id, const char *json, size_t length) {
    (void)json; (void)length;
    state_t *s = state;
    size_t size = 256;
    for (int i = 0; i < s->count; i++) size += strlen(s->messages[i]) + 1;
    char *text = malloc(size);
    int n = snprintf(text, size, "{\"app\":%d,\"transport\":%d,\"receiver\":%d,\"other\":%d,\"messages\":[",
                     s->app, s->transport, s->receiver, s->other);
    for (int i = 0; i < s->count; i++) n += snprintf(text + n, size - (size_t)n, "%s%s", i ? "," : "", s->messages[i]);
    n += snprintf(text + n, size - (size_t)n, "]}");
    s->host->complete_command(s->ctx, id, CASTLINE_OK, text);
    free(text);
}

static void close_channel(void *state) {
    state_t *s = state;
    for (int i = 0; i < s->count; i++) free(s->messages[i]);
    free(s);
}

static const char *const namespaces[] = {TEST_NS, NULL};
static const castline_channel_vtable channel_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable),
    .namespaces = namespaces, .open = open_channel, .on_message = on_message, .command = command, .close = close_channel,
};

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_CHANNEL, .rank = 0, .id = "test-open-send", .vtable = &channel_vtable},
};

CASTLINE_PLUGIN_DEFINE("test-send-on-open", "1.0", "channel fixture that sends from open", "Apache-2.0", NULL, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
