#define _GNU_SOURCE
#include "castline_shims.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

int castline_journal_print(int priority, const char *message) {
    return sd_journal_print(priority, "%s", message ? message : "");
}

char *castline_json_pack_record(const char *level, const char *class_name, const char *message, int64_t line) {
    json_error_t error;
    json_t *object = json_pack_ex(&error, 0, "{s:s, s:s, s:s, s:I}",
                                  "level", level ? level : "",
                                  "class", class_name ? class_name : "",
                                  "message", message ? message : "",
                                  "line", (json_int_t)line);
    if (!object) return NULL;
    char *text = json_dumps(object, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(object);
    return text;
}

int castline_json_unpack_class_line(const char *json_text, char **class_out, int64_t *line_out,
                                    char *error_out, size_t error_size) {
    json_error_t error;
    json_t *root = json_loads(json_text ? json_text : "", 0, &error);
    if (!root) {
        if (error_out && error_size) snprintf(error_out, error_size, "line %d column %d: %s", error.line, error.column, error.text);
        return -1;
    }
    const char *class_name = NULL;
    json_int_t line = 0;
    if (json_unpack_ex(root, &error, 0, "{s:s, s:I}", "class", &class_name, "line", &line) != 0) {
        if (error_out && error_size) snprintf(error_out, error_size, "%s", error.text);
        json_decref(root);
        return -1;
    }
    *class_out = strdup(class_name);
    *line_out = (int64_t)line;
    json_decref(root);
    return 0;
}

void castline_free(void *pointer) { free(pointer); }

const void *castline_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}
