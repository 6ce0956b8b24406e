// Fixed-arity C wrappers for variadic C functions Swift cannot call
// (sd_journal_print, json_pack, json_unpack). Each wrapper pins the format string, so a
// wrong argument list is a compile error instead of a crash.
#ifndef CASTLINE_SHIMS_H
#define CASTLINE_SHIMS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// sd_journal_print(priority, "%s", message). Returns 0 or a negative errno
/// (0 also when no journald socket exists — see logging notes §3.1).
int castline_journal_print(int priority, const char *message);

/// Builds the compact JSON text {"level":…,"class":…,"message":…,"line":…} with json_pack and
/// returns a malloc'd string the caller frees with castline_free, or NULL on failure.
char *castline_json_pack_record(const char *level, const char *class_name, const char *message, int64_t line);

/// Reads {"class": string, "line": integer} with json_unpack from JSON text. Returns 0 on
/// success and writes a malloc'd copy of the class into *class_out; -1 with a message in
/// error_out (NUL-terminated, error_size bytes) otherwise.
int castline_json_unpack_class_line(const char *json_text, char **class_out, int64_t *line_out,
                                    char *error_out, size_t error_size);

/// free() for strings returned by the shims.
void castline_free(void *pointer);

/// glibc's memmem (a GNU extension Swift's Glibc module does not export): the first occurrence
/// of `needle` in `haystack`, or NULL.
const void *castline_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

#ifdef __cplusplus
}
#endif

#endif
