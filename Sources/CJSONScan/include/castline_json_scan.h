// The JSON sink's hot loop in C: finding the bytes of a string that a JSON string literal can
// hold as they are, 16 at a time with SSE2 (x86-64) or NEON (arm64), in words elsewhere.
// Swift's SIMD types do not lower these compares to vector instructions (each lane becomes a
// branch), so this stays in C.
#ifndef CASTLINE_JSON_SCAN_H
#define CASTLINE_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Copies the leading bytes of `src[0..<length]` that need no escape in a JSON string (every
/// byte except those below 0x20, '"' and '\\') to `dst`, and returns how many that is: `length`
/// when none needs an escape, else the index of the first that does.
///
/// `dst` must have room for `length + 16` bytes: whole 16-byte blocks are stored, so bytes past
/// the returned count may be overwritten (with copies of the source). Never reads outside `src`.
size_t castline_json_copy_plain(uint8_t *dst, const uint8_t *src, size_t length);

#ifdef __cplusplus
}
#endif

#endif
