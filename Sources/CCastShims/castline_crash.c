// The crash report of an isolated plugin's helper process (`castline plugin-host`): when the
// plugin crashes it (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), a handler on its own stack
// writes, as frames of the helper's protocol on its socket, the plugin's last records (copied
// here as they were logged: the log sink's queue dies with the process) and one `crashReport`
// frame: the signal, the plugin callback that was running and the stack's frames (library,
// offset and, for exported symbols, symbol + offset), then lets the signal kill the process.
// Only async-signal-safe calls after the handler starts, save dladdr (what every crash
// reporter uses; it reads the loader's list without allocating).
#define _GNU_SOURCE
#include "castline_shims.h"
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define RECORDS 8
#define RECORD_BYTES 2048
#define FRAMES 32
#define REPORT_BYTES 16384

static int crash_fd = -1;
static const char *volatile crash_callback;
static char records[RECORDS][RECORD_BYTES];
static volatile size_t record_lengths[RECORDS];
static volatile unsigned long record_count;
static char report[REPORT_BYTES];
static char alternate_stack[64 * 1024];

typedef struct { char *at; size_t left; } text;

static void put(text *t, const char *s, size_t n) {
    if (n > t->left) n = t->left;
    memcpy(t->at, s, n);
    t->at += n;
    t->left -= n;
}

static void put_string(text *t, const char *s) { put(t, s, strlen(s)); }

/// A JSON string's characters (quotes, backslashes and control characters escaped).
static void put_escaped(text *t, const char *s) {
    for (; *s && t->left > 6; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') { put(t, "\\", 1); put(t, (const char *)&c, 1); }
        else if (c < 0x20) put(t, "?", 1);
        else put(t, (const char *)&c, 1);
    }
}

static void put_unsigned(text *t, unsigned long long v, int base) {
    char digits[24];
    int n = 0;
    do { digits[n++] = "0123456789abcdef"[v % (unsigned)base]; v /= (unsigned)base; } while (v && n < 24);
    if (base == 16) put(t, "0x", 2);
    while (n) put(t, &digits[--n], 1);
}

/// One frame: 4-byte big-endian length, then the JSON.
static void write_frame(const char *json, size_t length) {
    unsigned char header[4] = {(unsigned char)(length >> 24), (unsigned char)(length >> 16), (unsigned char)(length >> 8),
                               (unsigned char)length};
    (void)!write(crash_fd, header, 4);
    size_t done = 0;
    for (int tries = 0; done < length && tries < 64; tries++) {
        ssize_t n = write(crash_fd, json + done, length - done);
        if (n > 0) done += (size_t)n;
    }
}

static void on_crash(int sig, siginfo_t *info, void *context) {
    (void)info; (void)context;
    if (crash_fd >= 0) {
        // The last records first, oldest first (each already a `log` frame's JSON).
        unsigned long count = record_count;
        unsigned long first = count > RECORDS ? count - RECORDS : 0;
        for (unsigned long i = first; i < count; i++) {
            size_t slot = i % RECORDS;
            if (record_lengths[slot]) write_frame(records[slot], record_lengths[slot]);
        }
        text t = {report, REPORT_BYTES - 4};
        put_string(&t, "{\"crashReport\":{\"signal\":");
        put_unsigned(&t, (unsigned)sig, 10);
        put_string(&t, ",\"callback\":");
        const char *callback = crash_callback;
        if (callback) { put_string(&t, "\""); put_escaped(&t, callback); put_string(&t, "\""); } else put_string(&t, "null");
        put_string(&t, ",\"frames\":[");
        void *frames[FRAMES];
        int n = backtrace(frames, FRAMES);
        for (int i = 0; i < n; i++) {
            if (i) put_string(&t, ",");
            put_string(&t, "\"");
            Dl_info where;
            if (dladdr(frames[i], &where) && where.dli_fname) {
                if (where.dli_sname && where.dli_saddr) {
                    put_escaped(&t, where.dli_sname);
                    put_string(&t, " + ");
                    put_unsigned(&t, (unsigned long long)((uintptr_t)frames[i] - (uintptr_t)where.dli_saddr), 10);
                    put_string(&t, " ");
                }
                const char *base = strrchr(where.dli_fname, '/');
                put_string(&t, "(");
                put_escaped(&t, base ? base + 1 : where.dli_fname);
                put_string(&t, " + ");
                put_unsigned(&t, (unsigned long long)((uintptr_t)frames[i] - (uintptr_t)where.dli_fbase), 16);
                put_string(&t, ")");
            } else {
                put_unsigned(&t, (unsigned long long)(uintptr_t)frames[i], 16);
            }
            put_string(&t, "\"");
        }
        put_string(&t, "]}}");
        write_frame(report, (size_t)(t.at - report));
    }
    // SA_RESETHAND put the default action back: the signal kills the process as it would have.
    raise(sig);
}

void castline_crash_reporter_install(int fd) {
    crash_fd = fd;
    void *warm[2];
    (void)backtrace(warm, 2);   // loads libgcc's unwinder now, not in the handler
    stack_t stack = {.ss_sp = alternate_stack, .ss_size = sizeof alternate_stack, .ss_flags = 0};
    sigaltstack(&stack, NULL);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, NULL);
}

void castline_crash_reporter_set_callback(const char *callback) { crash_callback = callback; }

void castline_crash_reporter_note_record(const char *json, size_t length) {
    if (length > RECORD_BYTES) return;   // a record this long is left to the sink's queue
    unsigned long i = __atomic_fetch_add(&record_count, 1, __ATOMIC_RELAXED);
    size_t slot = i % RECORDS;
    record_lengths[slot] = 0;
    memcpy(records[slot], json, length);
    __atomic_store_n(&record_lengths[slot], length, __ATOMIC_RELEASE);
}
