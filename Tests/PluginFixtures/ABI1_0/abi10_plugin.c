/*
 * A plugin built against the frozen ABI 1.0 header (castline_plugin.h in this folder, a copy
 * that never changes), so a test can prove that every later castline still loads a 1.0 plugin.
 * It is not a SwiftPM target: ABICompatibilityTests compiles it with the system C compiler
 * against this folder only, then loads it with the current host.
 *
 * One feature of each kind, each touching the host the way a 1.0 plugin does:
 *   init: logs "abi10 initialised" under class ABI10 with field config = its config text;
 *   discovery "abi10-discovery": on start reports one device;
 *   channel "abi10-channel" (urn:x-cast:org.castline.abi10): a command is answered with
 *     {"answer": <the command>};
 *   media_format "abi10-format" (application/x-abi10): {"content_type":"application/x-abi10",
 *     "stream_type":"LIVE"};
 *   log_sink "abi10-sink": appends "LEVEL CLASS MESSAGE key=value..." lines to options.path.
 */
#include "castline_plugin.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)error;
    castline_field field = {.key = "config", .key_length = 6, .value_type = CASTLINE_VALUE_STRING,
                            .string = config, .string_length = strlen(config)};
    host->log(ctx, CASTLINE_LEVEL_INFO, "ABI10", "abi10 initialised", &field, 1, __FILE__, __LINE__, __func__);
    return CASTLINE_OK;
}

/* discovery */
static int32_t discovery_start(void *userdata, const castline_host_services *host, castline_host_ctx *ctx,
                               const char *config, const char *app_ids, void **out, castline_error_buffer error) {
    (void)userdata; (void)config; (void)app_ids; (void)error;
    host->device_found(ctx, "{\"id\":\"abi10-device\",\"name\":\"ABI 1.0 TV\",\"host\":\"127.0.0.1\",\"port\":8009}");
    *out = NULL;
    return CASTLINE_OK;
}

static void discovery_stop(void *state) { (void)state; }

static const char *const service_types[] = {"_googlecast._tcp", NULL};
static const castline_discovery_vtable discovery = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_discovery_vtable),
    .service_types = service_types, .start = discovery_start, .stop = discovery_stop,
};

/* channel */
typedef struct {
    const castline_host_services *host;
    castline_host_ctx *ctx;
} channel_state;

static int32_t channel_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)config; (void)session; (void)error;
    channel_state *s = calloc(1, sizeof *s);
    s->host = host;
    s->ctx = ctx;
    *out = s;
    return CASTLINE_OK;
}

static void channel_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)state; (void)ns; (void)source; (void)payload; (void)length;
}

static void channel_command(void *state, uint64_t id, const char *json, size_t length) {
    channel_state *s = state;
    char *answer = malloc(length + 16);
    snprintf(answer, length + 16, "{\"answer\":%s}", json);
    s->host->complete_command(s->ctx, id, CASTLINE_OK, answer);
    free(answer);
}

static void channel_close(void *state) { free(state); }

static const char *const namespaces[] = {"urn:x-cast:org.castline.abi10", NULL};
static const castline_channel_vtable channel = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable),
    .namespaces = namespaces, .open = channel_open, .on_message = channel_on_message,
    .command = channel_command, .close = channel_close,
};

/* media format */
static int32_t probe(void *userdata, const char *url, const char *content_type, const uint8_t *body, size_t body_length,
                     castline_json_emit_fn emit, void *emit_ctx, castline_error_buffer error) {
    (void)userdata; (void)url; (void)content_type; (void)body; (void)body_length; (void)error;
    const char *report = "{\"content_type\":\"application/x-abi10\",\"stream_type\":\"LIVE\"}";
    emit(emit_ctx, report, strlen(report));
    return CASTLINE_OK;
}

static const char *const content_types[] = {"application/x-abi10", NULL};
static const castline_media_format_vtable media_format = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_media_format_vtable),
    .content_types = content_types, .probe = probe,
};

/* log sink */
static int32_t sink_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx,
                         const char *config, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)ctx;
    const char *key = strstr(config, "\"path\":\"");
    if (!key) {
        snprintf(error.text, error.capacity, "options need a \"path\"");
        return CASTLINE_ERR_INVALID_ARGUMENT;
    }
    key += strlen("\"path\":\"");
    const char *end = strchr(key, '"');
    char path[1024];
    if (!end || (size_t)(end - key) >= sizeof path) return CASTLINE_ERR_INVALID_ARGUMENT;
    memcpy(path, key, (size_t)(end - key));
    path[end - key] = 0;
    FILE *file = fopen(path, "a");
    if (!file) {
        snprintf(error.text, error.capacity, "cannot open %s", path);
        return CASTLINE_ERR_FAILED;
    }
    *out = file;
    return CASTLINE_OK;
}

static void sink_write(void *state, const castline_log_record *records, size_t count) {
    FILE *file = state;
    for (size_t i = 0; i < count; i++) {
        const castline_log_record *r = &records[i];
        fprintf(file, "%d %s %s", r->level, r->class_name, r->message);
        for (size_t f = 0; f < r->field_count; f++) {
            const castline_field *field = &r->fields[f];
            if (field->value_type == CASTLINE_VALUE_STRING) fprintf(file, " %s=%s", field->key, field->string);
            else if (field->value_type == CASTLINE_VALUE_DOUBLE) fprintf(file, " %s=%g", field->key, field->double_value);
            else fprintf(file, " %s=%lld", field->key, (long long)field->int_value);
        }
        fputc('\n', file);
    }
}

static void sink_flush(void *state) { fflush(state); }
static void sink_close(void *state) { fclose(state); }

static const castline_log_sink_vtable log_sink = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_log_sink_vtable),
    .open = sink_open, .write = sink_write, .flush = sink_flush, .close = sink_close,
};

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_DISCOVERY, .id = "abi10-discovery", .vtable = &discovery},
    {.kind = CASTLINE_FEATURE_CHANNEL, .id = "abi10-channel", .vtable = &channel},
    {.kind = CASTLINE_FEATURE_MEDIA_FORMAT, .id = "abi10-format", .vtable = &media_format},
    {.kind = CASTLINE_FEATURE_LOG_SINK, .id = "abi10-sink", .vtable = &log_sink},
};

CASTLINE_PLUGIN_DEFINE("abi10", "1.0.0", "built against the frozen ABI 1.0 header", "Apache-2.0", init, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
