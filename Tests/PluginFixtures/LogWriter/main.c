/*
 * castline-test-logwriter: drives a log-sink plugin from a separate process, as the tests need
 * for kill -9 and saturation runs. Loads the plugin with dlopen like the host does.
 *
 *   castline-test-logwriter PLUGIN.so SINK_ID OPTIONS_JSON SECONDS [MAX_RECORDS]
 *
 * Writes batches of 1..64 records (each with a sequence number field, messages of varying
 * length, all lines well under 4 KiB) until SECONDS pass or MAX_RECORDS were written, printing
 * "ready" on stdout after the first batch. Exit 0 when done, 2 on usage or load errors.
 */
#include <castline_plugin.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s PLUGIN.so SINK_ID OPTIONS_JSON SECONDS [MAX_RECORDS]\n", argv[0]);
        return 2;
    }
    void *handle = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    castline_plugin_describe_fn describe = (castline_plugin_describe_fn)dlsym(handle, CASTLINE_PLUGIN_ENTRY_SYMBOL);
    if (!describe) { fprintf(stderr, "no entry symbol\n"); return 2; }
    const castline_plugin_descriptor *d = describe();
    const castline_log_sink_vtable *sink = NULL;
    void *userdata = NULL;
    for (size_t i = 0; i < d->feature_count; i++) {
        if (d->features[i].kind == CASTLINE_FEATURE_LOG_SINK && strcmp(d->features[i].id, argv[2]) == 0) {
            sink = d->features[i].vtable;
            userdata = d->features[i].feature_userdata;
        }
    }
    if (!sink) { fprintf(stderr, "no log sink %s\n", argv[2]); return 2; }
    char error[512] = {0};
    castline_error_buffer eb = {error, sizeof error};
    void *state = NULL;
    /* No host services: a sink must not need them to write. */
    castline_host_services host = {.version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof host};
    if (sink->open(userdata, &host, NULL, argv[3], &state, eb) != 0) { fprintf(stderr, "open: %s\n", error); return 2; }
    double seconds = atof(argv[4]);
    long long max_records = argc > 5 ? atoll(argv[5]) : -1;
    double end = now() + seconds;
    static const char filler[] = "abcdefghijklmnopqrstuvwxyz0123456789 \"quoted\" \\ tab\t newline\n unicode \xc3\xa9\xe2\x82\xac ";
    static char messages[64][2048];
    castline_log_record records[64];
    castline_field fields[64][8];
    long long seq = 0;
    unsigned rnd = 12345;
    int announced = 0;
    while (now() < end && (max_records < 0 || seq < max_records)) {
        rnd = rnd * 1103515245u + 12345u;
        size_t batch = 1 + (rnd >> 16) % 64;
        for (size_t i = 0; i < batch; i++) {
            rnd = rnd * 1103515245u + 12345u;
            size_t len = (rnd >> 16) % 1500;
            char *message = messages[i];
            for (size_t k = 0; k < len; k++) message[k] = filler[k % (sizeof filler - 1)];
            /* Never end inside a UTF-8 sequence: the host only hands sinks valid UTF-8. */
            while (len > 0 && ((unsigned char)message[len - 1] & 0x80)) {
                size_t start = len - 1;
                while (start > 0 && ((unsigned char)message[start] & 0xC0) == 0x80) start--;
                unsigned char lead = (unsigned char)message[start];
                size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
                if (len - start == need) break;
                len = start;
            }
            message[len] = 0;
            fields[i][0] = (castline_field){.key = "seq", .key_length = 3, .value_type = CASTLINE_VALUE_INT, .int_value = seq};
            fields[i][1] = (castline_field){.key = "device", .key_length = 6, .value_type = CASTLINE_VALUE_STRING,
                                            .string = "Living Room TV", .string_length = 14};
            /* Keys journald would drop as they are: the journald sink must rename them. */
            fields[i][2] = (castline_field){.key = "requestId", .key_length = 9, .value_type = CASTLINE_VALUE_INT, .int_value = 1000 + seq};
            fields[i][3] = (castline_field){.key = "x-weird.key", .key_length = 11, .value_type = CASTLINE_VALUE_STRING,
                                            .string = "w", .string_length = 1};
            fields[i][4] = (castline_field){.key = "message", .key_length = 7, .value_type = CASTLINE_VALUE_STRING,
                                            .string = "shadow", .string_length = 6};
            fields[i][5] = (castline_field){.key = "9lives", .key_length = 6, .value_type = CASTLINE_VALUE_BOOL, .int_value = 1};
            fields[i][6] = (castline_field){.key = "_private", .key_length = 8, .value_type = CASTLINE_VALUE_DOUBLE, .double_value = 1.5};
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            records[i] = (castline_log_record){
                .timestamp_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, .level = CASTLINE_LEVEL_INFO,
                .line = 42, .class_name = "LogWriter", .class_name_length = 9, .message = message, .message_length = len,
                .file = "LogWriter/main.c", .file_length = 16, .function = "main", .function_length = 4,
                .fields = fields[i], .field_count = 7};
            seq++;
            if (max_records >= 0 && seq >= max_records) { batch = i + 1; break; }
        }
        sink->write(state, records, batch);
        if (!announced) { printf("ready\n"); fflush(stdout); announced = 1; }
    }
    unsigned long long dropped = sink->dropped ? (unsigned long long)sink->dropped(state) : 0;
    char problem[512] = {0};
    castline_error_buffer pb = {problem, sizeof problem};
    int has_problem = sink->problem ? sink->problem(state, pb) : 0;
    sink->close(state);
    printf("done %lld dropped %llu problem %s\n", seq, dropped, has_problem ? problem : "none");
    return 0;
}
