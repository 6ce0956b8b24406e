/*
 * Test fixtures: plugins that hand castline hostile lengths, sizes, counts and strings through
 * the ABI, or that leak. Not a SwiftPM target: Tests/Conformance/test_security.py builds one
 * .so per variant with cc, defining one of:
 *
 *   HOSTILE_EMIT_HUGE     media format "hostile-emit" (rank 1000, every content type): its probe
 *                         emits a report of length 1 << 40.
 *   HOSTILE_STRUCT_SIZE   a descriptor whose struct_size is 0xFFFFFFFF.
 *   HOSTILE_COUNT         a descriptor that declares 3 features for an array of 1.
 *   HOSTILE_NO_NUL        channel "hostile-no-nul" (urn:x-cast:org.castline.hostile): a command
 *                         logs a message and completes with an error text, both without a NUL,
 *                         running into a page that cannot be read.
 *   HOSTILE_LEAK          channel "hostile-leak" (urn:x-cast:org.castline.hostile): from open on,
 *                         a timer allocates and touches 8 MiB every 100 ms and never frees it.
 *   HOSTILE_SEGV          channel "hostile-segv" (urn:x-cast:org.castline.test): command
 *                         {"do":"pid"} answers the pid; {"do":"crash"} sends {"type":"CRASH"}, and
 *                         the simulator's test app's echo makes on_message dereference NULL.
 */
#include <castline_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const castline_host_services *g_host;

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config, castline_error_buffer error) {
    (void)ctx; (void)config; (void)error;
    g_host = host;
    return CASTLINE_OK;
}

/* One readable page full of 'x', followed by a page that cannot be read: a string without a NUL
 * whose strlen would fault. */
static const char *unterminated(void) {
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) return "mmap failed";
    memset(pages, 'x', (size_t)page);
    mprotect(pages + page, (size_t)page, PROT_NONE);
    return pages;
}

#if defined(HOSTILE_EMIT_HUGE)

static const char *const content_types[] = {"*", NULL};

static int32_t probe(void *userdata, const char *url, const char *content_type, const uint8_t *body, size_t body_length,
                     castline_json_emit_fn emit, void *emit_ctx, castline_error_buffer error) {
    (void)userdata; (void)url; (void)content_type; (void)body; (void)body_length; (void)error;
    static const char report[] = "{\"content_type\": \"video/mp4\"}";
    emit(emit_ctx, report, (size_t)1 << 40);
    return CASTLINE_OK;
}

static const castline_media_format_vtable vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_media_format_vtable),
    .content_types = content_types, .probe = probe,
};
static const castline_feature features[] = {{CASTLINE_FEATURE_MEDIA_FORMAT, 1000, "hostile-emit", &vtable, NULL}};
CASTLINE_PLUGIN_DEFINE("hostile-emit", "1.0.0", "emits a report of 1 TiB", "MIT", init, NULL, features, CASTLINE_FEATURE_COUNT(features))

#elif defined(HOSTILE_STRUCT_SIZE)

static const castline_plugin_descriptor descriptor = {
    CASTLINE_PLUGIN_ABI_MAJOR, CASTLINE_PLUGIN_ABI_MINOR, 0xFFFFFFFFu, (uint32_t)sizeof(castline_feature),
    "hostile-struct-size", "1.0.0", "a descriptor of 4 GiB", "MIT", init, NULL, NULL, 0};
CASTLINE_PLUGIN_EXPORT(descriptor)

#elif defined(HOSTILE_COUNT)

static int32_t count_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                          const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)ctx; (void)config; (void)session; (void)error;
    *out = NULL;
    return CASTLINE_OK;
}
static void count_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)state; (void)ns; (void)source; (void)payload; (void)length;
}
static void count_close(void *state) { (void)state; }
static const char *const count_namespaces[] = {"urn:x-cast:org.castline.hostile", NULL};
static const castline_channel_vtable count_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable), .namespaces = count_namespaces,
    .open = count_open, .on_message = count_on_message, .close = count_close,
};
/* What follows the array in memory is garbage to the host. */
static const castline_feature one_feature[] = {{CASTLINE_FEATURE_CHANNEL, 0, "hostile-count", &count_vtable, NULL}};
static const char garbage[] = "\x01\xff\xfe\x80garbage that is not a feature\x07\x1b[2J";
CASTLINE_PLUGIN_DEFINE("hostile-count", "1.0.0", "declares 3 features for an array of 1", "MIT", init, NULL, one_feature, 3)
const char *hostile_count_garbage(void) { return garbage; }

#elif defined(HOSTILE_NO_NUL) || defined(HOSTILE_LEAK) || defined(HOSTILE_SEGV)

#if defined(HOSTILE_SEGV)
#define NAMESPACE "urn:x-cast:org.castline.test"
#define FEATURE "hostile-segv"
#elif defined(HOSTILE_LEAK)
#define NAMESPACE "urn:x-cast:org.castline.hostile"
#define FEATURE "hostile-leak"
#else
#define NAMESPACE "urn:x-cast:org.castline.hostile"
#define FEATURE "hostile-no-nul"
#endif

typedef struct { castline_host_ctx *ctx; } channel_state;

#if defined(HOSTILE_LEAK)
static void leak(void *user) {
    (void)user;
    size_t size = (size_t)8 << 20;
    char *block = malloc(size);
    if (block) memset(block, 1, size);   /* touched: resident, never freed */
}
#endif

static int32_t channel_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)config; (void)session; (void)error;
    channel_state *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    *out = s;
#if defined(HOSTILE_LEAK)
    g_host->timer_start(ctx, 100, 100, leak, NULL);
#endif
    return CASTLINE_OK;
}

static void channel_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)state; (void)ns; (void)source; (void)length;
    if (strstr(payload, "\"CRASH\"")) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
}

static void channel_command(void *state, uint64_t id, const char *json, size_t length) {
    (void)length;
    channel_state *s = state;
    if (strstr(json, "\"pid\"")) {
        char text[48];
        snprintf(text, sizeof text, "{\"pid\":%d}", (int)getpid());
        g_host->complete_command(s->ctx, id, CASTLINE_OK, text);
    } else if (strstr(json, "\"crash\"")) {
        g_host->send_message(s->ctx, NAMESPACE, NULL, "{\"type\":\"CRASH\",\"requestId\":2}");
    } else if (strstr(json, "\"unterminated\"")) {
        const char *text = unterminated();
        g_host->log(s->ctx, CASTLINE_LEVEL_WARNING, "HostileNoNul", text, NULL, 0, NULL, 0, NULL);
        g_host->complete_command(s->ctx, id, CASTLINE_ERR_FAILED, text);
    } else {
        g_host->complete_command(s->ctx, id, CASTLINE_ERR_INVALID_ARGUMENT, "unknown command");
    }
}

static void channel_close(void *state) { free(state); }

static const char *const namespaces[] = {NAMESPACE, NULL};
static const castline_channel_vtable channel_vtable = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_channel_vtable), .namespaces = namespaces,
    .open = channel_open, .on_message = channel_on_message, .command = channel_command, .close = channel_close,
};
static const castline_feature features[] = {{CASTLINE_FEATURE_CHANNEL, 0, FEATURE, &channel_vtable, NULL}};
CASTLINE_PLUGIN_DEFINE(FEATURE, "1.0.0", "a hostile channel", "MIT", init, NULL, features, CASTLINE_FEATURE_COUNT(features))

#else
#error "define one HOSTILE_* variant"
#endif
