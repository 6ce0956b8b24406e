/*
 * Test fixture: a channel that segfaults in on_message on request, for `plugins.isolated`: the
 * helper process dies, castline must not.
 *
 * channel "test-crashing-channel" (urn:x-cast:org.castline.test), commands {"do": "..."}:
 *   "pid"   → completes {"pid": <this process's pid>}
 *   "echo"  → sends {"type":"PING"} and completes with the message that comes back (the
 *             simulator's test app echoes);
 *   "crash" → sends {"type":"CRASH"}; the echo comes back into on_message, which logs a warning
 *             (class CrashingChannel) and dereferences NULL (SIGSEGV). The command never completes.
 *   "noisy-crash" → sends {"type":"NOISY_CRASH"}; on_message starts a thread logging 60 kB records
 *             without pause (the helper's log sink thread is writing frames all the time), lets
 *             it run 300 ms, then crashes like "crash": the crash report must not land inside
 *             one of those frames.
 *   "hang"  → sends {"type":"HANG"}; on_message never returns (an hour of sleeps): the host's
 *             liveness ping goes unanswered and the helper is killed.
 *   "eat"   → sends {"type":"EAT"}; on_message touches 8 MiB every 20 ms (512 MiB at most), then
 *             sleeps: the helper goes over plugins.limits.memory_mb and is killed.
 */
#include <castline_plugin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_NS "urn:x-cast:org.castline.test"

static const castline_host_services *g_host;

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)ctx; (void)config; (void)error;
    g_host = host;
    return CASTLINE_OK;
}

typedef struct { castline_host_ctx *ctx; uint64_t waiting; } channel_state;

static int32_t channel_open(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                            const char *session, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)config; (void)session; (void)error;
    channel_state *s = calloc(1, sizeof *s);
    s->ctx = ctx;
    *out = s;
    return CASTLINE_OK;
}

static void *log_without_pause(void *ctx) {
    static char text[60000];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = 0;
    for (;;) g_host->log(ctx, CASTLINE_LEVEL_INFO, "NoisyChannel", text, NULL, 0, NULL, 0, NULL);
    return NULL;
}

static void channel_on_message(void *state, const char *ns, const char *source, const char *payload, size_t length) {
    (void)ns; (void)source; (void)length;
    channel_state *s = state;
    if (strstr(payload, "\"NOISY_CRASH\"")) {
        pthread_t noisy;
        pthread_create(&noisy, NULL, log_without_pause, s->ctx);
        usleep(300000);
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    if (strstr(payload, "\"CRASH\"")) {
        /* The plugin's last record: it must reach the host although the crash follows at once. */
        g_host->log(s->ctx, CASTLINE_LEVEL_WARNING, "CrashingChannel", "CRASH received: dereferencing NULL", NULL, 0, NULL, 0, NULL);
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    if (strstr(payload, "\"HANG\"")) {
        for (int i = 0; i < 3600; i++) sleep(1);
    }
    if (strstr(payload, "\"EAT\"")) {
        for (int i = 0; i < 64; i++) {
            char *chunk = malloc(8 << 20);
            if (chunk) memset(chunk, i + 1, 8 << 20);   /* resident, not just reserved */
            usleep(20000);
        }
        for (int i = 0; i < 3600; i++) sleep(1);
    }
    if (s->waiting) {
        uint64_t id = s->waiting;
        s->waiting = 0;
        g_host->complete_command(s->ctx, id, CASTLINE_OK, payload);
    }
}

static void channel_command(void *state, uint64_t id, const char *json, size_t length) {
    (void)length;
    channel_state *s = state;
    if (strstr(json, "\"pid\"")) {
        char text[48];
        snprintf(text, sizeof text, "{\"pid\":%d}", (int)getpid());
        g_host->complete_command(s->ctx, id, CASTLINE_OK, text);
    } else if (strstr(json, "\"echo\"")) {
        s->waiting = id;
        g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"PING\",\"requestId\":1}");
    } else if (strstr(json, "\"noisy-crash\"")) {
        g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"NOISY_CRASH\",\"requestId\":5}");
    } else if (strstr(json, "\"crash\"")) {
        g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"CRASH\",\"requestId\":2}");
    } else if (strstr(json, "\"hang\"")) {
        g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"HANG\",\"requestId\":3}");
    } else if (strstr(json, "\"eat\"")) {
        g_host->send_message(s->ctx, TEST_NS, NULL, "{\"type\":\"EAT\",\"requestId\":4}");
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
    {.kind = CASTLINE_FEATURE_CHANNEL, .rank = 0, .id = "test-crashing-channel", .vtable = &channel_vtable},
};

CASTLINE_PLUGIN_DEFINE("test-crashes-in-channel", "1.0", "segfaults in on_message on request", "Apache-2.0", init, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
