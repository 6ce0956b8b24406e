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
#include <errno.h>
#include <sched.h>
#include <execinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
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
// Who writes frames on the helper's socket: 0 nobody, 1 a thread of the helper (between
// castline_frame_write_begin and _end), 2 the crash handler (for good: the process is ending).
static int frame_writer;

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

/// One stack frame as JSON string characters: `symbol + N (library + 0xOFFSET)` (the symbol
/// where dladdr names one), or the bare address.
static void put_frame(text *t, void *frame) {
    Dl_info where;
    if (dladdr(frame, &where) && where.dli_fname) {
        if (where.dli_sname && where.dli_saddr) {
            put_escaped(t, where.dli_sname);
            put_string(t, " + ");
            put_unsigned(t, (unsigned long long)((uintptr_t)frame - (uintptr_t)where.dli_saddr), 10);
            put_string(t, " ");
        }
        const char *base = strrchr(where.dli_fname, '/');
        put_string(t, "(");
        put_escaped(t, base ? base + 1 : where.dli_fname);
        put_string(t, " + ");
        put_unsigned(t, (unsigned long long)((uintptr_t)frame - (uintptr_t)where.dli_fbase), 16);
        put_string(t, ")");
    } else {
        put_unsigned(t, (unsigned long long)(uintptr_t)frame, 16);
    }
}

/// Writes all of `bytes` on the helper's non-blocking socket, waiting in poll while it is full:
/// at most 2 s in all (the host reads it; a host that stopped reading loses the report).
static int write_all(const void *bytes, size_t length, int *budget_ms) {
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(crash_fd, (const char *)bytes + done, length - done);
        if (n > 0) { done += (size_t)n; continue; }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && *budget_ms > 0) {
            struct pollfd p = {.fd = crash_fd, .events = POLLOUT};
            (void)poll(&p, 1, 20);
            *budget_ms -= 20;
            continue;
        }
        return 0;
    }
    return 1;
}

/// One frame: 4-byte big-endian length, then the JSON.
static int write_frame(const char *json, size_t length, int *budget_ms) {
    unsigned char header[4] = {(unsigned char)(length >> 24), (unsigned char)(length >> 16), (unsigned char)(length >> 8),
                               (unsigned char)length};
    return write_all(header, 4, budget_ms) && write_all(json, length, budget_ms);
}

/// Takes the socket from the helper's writers, so the report never lands inside a frame another
/// thread is halfway through (the plugin's last record, sent by the log sink's thread as the
/// plugin crashes, is the usual one). Waits up to 200 ms for that frame to end; a writer stuck
/// longer (or the crashing thread itself, mid-frame) is overtaken.
static void take_socket(void) {
    for (int waited = 0; waited < 200; waited++) {
        int idle = 0;
        if (__atomic_compare_exchange_n(&frame_writer, &idle, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    __atomic_store_n(&frame_writer, 2, __ATOMIC_RELEASE);
}

int castline_frame_write_begin(void) {
    for (;;) {
        int idle = 0;
        if (__atomic_compare_exchange_n(&frame_writer, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 1;
        if (idle == 2) return 0;   // the crash handler has it: this process is ending
        sched_yield();
    }
}

void castline_frame_write_end(void) {
    int mine = 1;
    (void)__atomic_compare_exchange_n(&frame_writer, &mine, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

static void on_crash(int sig, siginfo_t *info, void *context) {
    (void)info; (void)context;
    if (crash_fd >= 0) {
        int saved_errno = errno, budget_ms = 2000, whole = 1;
        take_socket();
        // The last records first, oldest first (each already a `log` frame's JSON).
        unsigned long count = record_count;
        unsigned long first = count > RECORDS ? count - RECORDS : 0;
        for (unsigned long i = first; i < count; i++) {
            size_t slot = i % RECORDS;
            if (whole && record_lengths[slot]) whole = write_frame(records[slot], record_lengths[slot], &budget_ms);
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
            put_frame(&t, frames[i]);
            put_string(&t, "\"");
        }
        put_string(&t, "]}}");
        if (whole) (void)write_frame(report, (size_t)(t.at - report), &budget_ms);
        errno = saved_errno;
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

// ---------------------------------------------------------------------------------------------
// The daemon's crash record: when code in castline's own process crashes it (an in-process
// plugin's SIGSEGV), one record in the JSON sink's schema (class `CrashReporter`, at error) is
// appended to a descriptor of the sink's file opened beforehand, naming the signal and the
// faulting library, symbol and stack (dladdr). Then the handler that was there before (Swift's
// backtracer, which prints the stack on stderr) gets the signal: the previous action is put back
// and the faulting instruction runs again. Async-signal-safe save dladdr and backtrace (warmed).

static int record_fd = -1;
static struct sigaction previous[32];
static char record_line[REPORT_BYTES];

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "?";
    }
}

static void put_two(text *t, unsigned v) {
    char d[2] = {(char)('0' + v / 10 % 10), (char)('0' + v % 10)};
    put(t, d, 2);
}

/// `2026-11-28T20:14:36.123456789Z` for Unix seconds and nanoseconds (days to a civil date by
/// Howard Hinnant's algorithm: no gmtime, which is not async-signal-safe).
static void put_rfc3339(text *t, long long seconds, long nanos) {
    long long days = seconds / 86400, rest = seconds % 86400;
    if (rest < 0) { rest += 86400; days -= 1; }
    long long z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long year = (long long)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    unsigned day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
    if (month <= 2) year += 1;
    put_unsigned(t, (unsigned long long)year, 10);
    put_string(t, "-"); put_two(t, month); put_string(t, "-"); put_two(t, day);
    put_string(t, "T"); put_two(t, (unsigned)(rest / 3600)); put_string(t, ":"); put_two(t, (unsigned)(rest % 3600 / 60));
    put_string(t, ":"); put_two(t, (unsigned)(rest % 60)); put_string(t, ".");
    char digits[9];
    for (int i = 8; i >= 0; i--) { digits[i] = (char)('0' + nanos % 10); nanos /= 10; }
    put(t, digits, 9);
    put_string(t, "Z");
}

/// The instruction that faulted, from the signal's context (NULL where unknown).
static void *faulting_pc(void *context) {
#if defined(__x86_64__)
    return context ? (void *)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP] : NULL;
#elif defined(__aarch64__)
    return context ? (void *)((ucontext_t *)context)->uc_mcontext.pc : NULL;
#else
    (void)context;
    return NULL;
#endif
}

static void on_daemon_crash(int sig, siginfo_t *info, void *context) {
    (void)info;
    if (record_fd >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        void *pc = faulting_pc(context);
        Dl_info where;
        int named = pc && dladdr(pc, &where) && where.dli_fname;
        text t = {record_line, REPORT_BYTES - 2};
        put_string(&t, "{\"time\":\"");
        put_rfc3339(&t, (long long)now.tv_sec, now.tv_nsec);
        put_string(&t, "\",\"time_unix_nano\":");
        put_unsigned(&t, (unsigned long long)now.tv_sec * 1000000000ULL + (unsigned long long)now.tv_nsec, 10);
        put_string(&t, ",\"severity_number\":17,\"severity_text\":\"ERROR\",\"level\":\"error\",\"class\":\"CrashReporter\",\"body\":\"castline crashed: signal ");
        put_unsigned(&t, (unsigned)sig, 10);
        put_string(&t, " (");
        put_string(&t, signal_name(sig));
        put_string(&t, ")");
        if (named) {
            put_string(&t, " in ");
            put_frame(&t, pc);
        }
        put_string(&t, "\",\"attributes\":{\"pid\":");
        put_unsigned(&t, (unsigned long long)getpid(), 10);
        put_string(&t, ",\"role\":\"daemon\",\"problem\":\"crashed\",\"signal\":\"");
        put_string(&t, signal_name(sig));
        put_string(&t, "\",\"signalNumber\":");
        put_unsigned(&t, (unsigned)sig, 10);
        if (named) {
            put_string(&t, ",\"library\":\"");
            put_escaped(&t, where.dli_fname);
            put_string(&t, "\"");
            if (where.dli_sname) { put_string(&t, ",\"symbol\":\""); put_escaped(&t, where.dli_sname); put_string(&t, "\""); }
        }
        put_string(&t, ",\"backtrace\":\"");
        void *frames[FRAMES];
        int n = backtrace(frames, FRAMES);
        for (int i = 0; i < n; i++) {
            if (i) put_string(&t, "\\n");
            put_frame(&t, frames[i]);
        }
        put_string(&t, "\"}}");
        t.left += 2;
        put_string(&t, "\n");
        size_t length = (size_t)(t.at - record_line), done = 0;
        for (int tries = 0; done < length && tries < 64; tries++) {
            ssize_t w = write(record_fd, record_line + done, length - done);
            if (w > 0) done += (size_t)w;
        }
        record_fd = -1;   // once
    }
    // The handler that was there before gets the signal: returning runs the faulting
    // instruction again (abort() raises again by itself).
    if (sig > 0 && sig < 32) sigaction(sig, &previous[sig], NULL);
}

void castline_crash_record_install(int fd) {
    record_fd = fd;
    void *warm[2];
    (void)backtrace(warm, 2);
    Dl_info where;
    (void)dladdr((void *)castline_crash_record_install, &where);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_daemon_crash;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) sigaction(signals[i], &action, &previous[signals[i]]);
}
