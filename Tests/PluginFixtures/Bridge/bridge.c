/* Test fixture: a bridge feature (ABI 1.1) in plain C.
 *   start: refuses a host without the 1.1 services (CASTLINE_HOST_HAS), subscribes to the
 *     "device" events and sends request 7, the JSON in the config's "request" (or GET /v1/status);
 *   on_reply: logs "reply" under class TestBridge with fields id, status, json;
 *   on_event: logs "event" with field json;
 *   stop: logs "stopped".
 * test_bridge_host_has_services(size) answers CASTLINE_HOST_HAS for a host table of that size:
 * what a 1.1 plugin sees in a 1.0 host (size 80) and in a 1.1 one. */
#include <castline_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const castline_host_services *host;
    castline_host_ctx *ctx;
} bridge_state;

static void say(bridge_state *s, const char *message, const castline_field *fields, size_t count) {
    s->host->log(s->ctx, CASTLINE_LEVEL_INFO, "TestBridge", message, fields, count, __FILE__, __LINE__, __func__);
}

static castline_field text_field(const char *key, const char *value) {
    castline_field f = {.key = key, .key_length = strlen(key), .value_type = CASTLINE_VALUE_STRING,
                        .string = value, .string_length = strlen(value)};
    return f;
}

static castline_field int_field(const char *key, int64_t value) {
    castline_field f = {.key = key, .key_length = strlen(key), .value_type = CASTLINE_VALUE_INT, .int_value = value};
    return f;
}

static int32_t start(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                     void **out, castline_error_buffer error) {
    (void)userdata;
    if (!CASTLINE_HOST_HAS(host, events_subscribe)) {
        snprintf(error.text, error.capacity, "this host has no bridge services (ABI 1.0)");
        return CASTLINE_ERR_FAILED;
    }
    bridge_state *s = calloc(1, sizeof *s);
    s->host = host;
    s->ctx = ctx;
    *out = s;
    if (host->events_subscribe(ctx, "device") != CASTLINE_OK) {
        snprintf(error.text, error.capacity, "events_subscribe refused");
        free(s);
        return CASTLINE_ERR_FAILED;
    }
    const char *request = strstr(config, "\"request\":");
    char buffer[512];
    if (request) {
        request += strlen("\"request\":");
        size_t length = strlen(request);
        if (length >= sizeof buffer) length = sizeof buffer - 1;
        memcpy(buffer, request, length);
        buffer[length] = 0;
        char *end = strrchr(buffer, '}'); /* drop the config object's own closing brace */
        if (end) *end = 0;
    } else {
        snprintf(buffer, sizeof buffer, "{\"method\":\"GET\",\"path\":\"/v1/status\"}");
    }
    int32_t rc = host->control_request(ctx, 7, buffer);
    castline_field f = int_field("status", rc);
    say(s, "requested", &f, 1);
    return CASTLINE_OK;
}

static void on_reply(void *state, uint64_t id, int32_t status, const char *json, size_t length) {
    (void)length;
    castline_field fields[] = {int_field("id", (int64_t)id), int_field("status", status), text_field("json", json)};
    say(state, "reply", fields, 3);
}

static void on_event(void *state, const char *json, size_t length) {
    (void)length;
    castline_field f = text_field("json", json);
    say(state, "event", &f, 1);
}

static void stop(void *state) {
    say(state, "stopped", NULL, 0);
    free(state);
}

static const castline_bridge_vtable bridge = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_bridge_vtable),
    .start = start, .on_reply = on_reply, .on_event = on_event, .stop = stop,
};

static const castline_feature features[] = {{CASTLINE_FEATURE_BRIDGE, 0, "test-bridge", &bridge, NULL}};

CASTLINE_PLUGIN_VISIBLE int test_bridge_host_has_services(uint32_t struct_size) {
    castline_host_services table;
    memset(&table, 0, sizeof table);
    table.version = struct_size > CASTLINE_HOST_SERVICES_SIZE_1_0 ? 1 : 0;
    table.struct_size = struct_size;
    return CASTLINE_HOST_HAS(&table, control_request) && CASTLINE_HOST_HAS(&table, events_subscribe);
}

CASTLINE_PLUGIN_DEFINE("test-bridge", "1.0", "a bridge in C", "Apache-2.0", NULL, NULL, features, CASTLINE_FEATURE_COUNT(features))
