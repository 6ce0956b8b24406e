/*
 * EchoChannelC — a channel plugin in plain C, using jansson: the model for C plugin authors.
 *
 * Feature channel "example-echo" owns urn:x-cast:org.castline.example.echo.
 *   command {"text": "..."}  → sends {"type":"ECHO","requestId":N,"text":"..."} to the app,
 *   the app's reply with the same requestId → command result
 *   {"text": "...", "request_id": N, "round_trip_ms": 1.2}.
 * A request without an answer is failed after `timeout_ms` (config, default 5000) with a host
 * timer, or at once when the app stops (on_app_event, ABI 1.2). Everything is logged through the host under class "EchoChannelC".
 *
 * Build outside the tree: cc -shared -fPIC echo_channel.c $(pkg-config --cflags --libs castline-plugin jansson)
 */
#include <castline_plugin.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ECHO_NS "urn:x-cast:org.castline.example.echo"
#define MAX_PENDING 64

typedef struct {
    int64_t request_id;
    uint64_t command_id;
    uint64_t timer_id;
    double sent_at;
} pending_request;

typedef struct echo_state echo_state;

typedef struct {
    echo_state *state;
    int slot;
} timeout_arg;

struct echo_state {
    const castline_host_services *host;
    castline_host_ctx *ctx;
    int64_t next_request_id;
    uint64_t timeout_ms;
    pending_request pending[MAX_PENDING];
    timeout_arg timeout_args[MAX_PENDING];
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void log_text(echo_state *s, int32_t level, const char *message, int64_t request_id) {
    castline_field field = {.key = "requestId", .key_length = 9, .value_type = CASTLINE_VALUE_INT, .int_value = request_id};
    s->host->log(s->ctx, level, "EchoChannelC", message, &field, request_id ? 1 : 0, __FILE__, __LINE__, __func__);
}

static void fail(echo_state *s, uint64_t command_id, const char *reason) {
    s->host->complete_command(s->ctx, command_id, CASTLINE_ERR_FAILED, reason);
}

static void on_timeout(void *user) {
    timeout_arg *arg = user;
    echo_state *s = arg->state;
    pending_request *p = &s->pending[arg->slot];
    if (p->request_id == 0) return;
    char reason[128];
    snprintf(reason, sizeof reason, "no ECHO reply within %llu ms", (unsigned long long)s->timeout_ms);
    log_text(s, CASTLINE_LEVEL_WARNING, reason, p->request_id);
    fail(s, p->command_id, reason);
    p->request_id = 0;
}

static int32_t echo_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                         const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)session;
    json_error_t json_error;
    json_t *options = json_loads(config, 0, &json_error);
    if (!options || !json_is_object(options)) {
        snprintf(error.text, error.capacity, "config is not a JSON object: %s", json_error.text);
        json_decref(options);
        return CASTLINE_ERR_INVALID_JSON;
    }
    json_t *timeout = json_object_get(options, "timeout_ms");
    if (timeout && (!json_is_integer(timeout) || json_integer_value(timeout) < 1)) {
        snprintf(error.text, error.capacity, "timeout_ms must be a positive integer");
        json_decref(options);
        return CASTLINE_ERR_INVALID_ARGUMENT;
    }
    echo_state *s = calloc(1, sizeof *s);
    if (!s) {
        json_decref(options);
        return CASTLINE_ERR_FAILED;
    }
    s->host = host;
    s->ctx = ctx;
    s->next_request_id = 1;
    s->timeout_ms = timeout ? (uint64_t)json_integer_value(timeout) : 5000;
    json_decref(options);
    *out = s;
    log_text(s, CASTLINE_LEVEL_DEBUG, "echo channel open", 0);
    return CASTLINE_OK;
}

static void echo_command(void *state, uint64_t command_id, const char *json, size_t length) {
    echo_state *s = state;
    json_error_t json_error;
    json_t *command = json_loadb(json, length, 0, &json_error);
    json_t *text = command ? json_object_get(command, "text") : NULL;
    if (!json_is_string(text)) {
        fail(s, command_id, "the echo command needs a \"text\" string");
        json_decref(command);
        return;
    }
    int slot = -1;
    for (int i = 0; i < MAX_PENDING; i++) {
        if (s->pending[i].request_id == 0) { slot = i; break; }
    }
    if (slot < 0) {
        fail(s, command_id, "too many echo requests in flight (64)");
        json_decref(command);
        return;
    }
    int64_t request_id = s->next_request_id++;
    json_t *message = json_pack("{s:s, s:I, s:O}", "type", "ECHO", "requestId", (json_int_t)request_id, "text", text);
    char *payload = json_dumps(message, JSON_COMPACT);
    json_decref(message);
    json_decref(command);
    int32_t rc = s->host->send_message(s->ctx, ECHO_NS, NULL, payload);
    free(payload);
    if (rc != CASTLINE_OK) {
        fail(s, command_id, "the host refused to send the ECHO request");
        return;
    }
    s->pending[slot] = (pending_request){.request_id = request_id, .command_id = command_id, .sent_at = now_ms()};
    s->timeout_args[slot] = (timeout_arg){.state = s, .slot = slot};
    s->pending[slot].timer_id = s->host->timer_start(s->ctx, s->timeout_ms, 0, on_timeout, &s->timeout_args[slot]);
    log_text(s, CASTLINE_LEVEL_DEBUG, "ECHO sent", request_id);
}

static void echo_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)ns; (void)source;
    echo_state *s = state;
    json_error_t json_error;
    json_t *message = json_loadb(payload, length, 0, &json_error);
    json_t *request_id = message ? json_object_get(message, "requestId") : NULL;
    if (!json_is_integer(request_id)) {
        log_text(s, CASTLINE_LEVEL_WARNING, "message without a requestId ignored", 0);
        json_decref(message);
        return;
    }
    int64_t id = json_integer_value(request_id);
    for (int i = 0; i < MAX_PENDING; i++) {
        pending_request *p = &s->pending[i];
        if (p->request_id != id) continue;
        s->host->timer_cancel(s->ctx, p->timer_id);
        json_t *text = json_object_get(message, "text");
        json_t *result = json_pack("{s:O?, s:I, s:f}", "text", text, "request_id", (json_int_t)id, "round_trip_ms", now_ms() - p->sent_at);
        char *out = json_dumps(result, JSON_COMPACT);
        s->host->complete_command(s->ctx, p->command_id, CASTLINE_OK, out);
        free(out);
        json_decref(result);
        p->request_id = 0;
        json_decref(message);
        return;
    }
    log_text(s, CASTLINE_LEVEL_DEBUG, "reply for no pending request ignored", id);
    json_decref(message);
}

static void echo_close(void *state) {
    echo_state *s = state;
    for (int i = 0; i < MAX_PENDING; i++) {
        if (s->pending[i].request_id) s->host->timer_cancel(s->ctx, s->pending[i].timer_id);
    }
    free(s);
}

/* ABI 1.2: the app stopped (its pending echoes will never be answered: fail them now, not at
 * their timeouts), runs again, or the link came back. */
static void echo_on_app_event(void *state, int32_t event, const char *info, size_t length) {
    (void)info; (void)length;
    echo_state *s = state;
    if (event != CASTLINE_APP_STOPPED) {
        log_text(s, CASTLINE_LEVEL_INFO, event == CASTLINE_APP_RELAUNCHED ? "app runs again" : "session resumed", 0);
        return;
    }
    int failed = 0;
    for (int i = 0; i < MAX_PENDING; i++) {
        pending_request *p = &s->pending[i];
        if (!p->request_id) continue;
        s->host->timer_cancel(s->ctx, p->timer_id);
        fail(s, p->command_id, "the app stopped before it answered");
        p->request_id = 0;
        failed++;
    }
    log_text(s, CASTLINE_LEVEL_INFO, "app stopped; pending echoes failed", failed);
}

static const char *const namespaces[] = {ECHO_NS, NULL};
static const castline_channel_vtable channel = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable),
    .namespaces = namespaces, .open = echo_open, .on_message = echo_on_message,
    .command = echo_command, .close = echo_close, .on_app_event = echo_on_app_event,
};

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_CHANNEL, .rank = 0, .id = "example-echo", .vtable = &channel},
};

/* The descriptor and the exported entry symbol: id, version, description, license, init, deinit,
 * features. */
CASTLINE_PLUGIN_DEFINE("echo-channel-c", "1.0.0",
                       "example channel in C (jansson): ECHO request/response on urn:x-cast:org.castline.example.echo",
                       "Apache-2.0", NULL, NULL, features, CASTLINE_FEATURE_COUNT(features))
