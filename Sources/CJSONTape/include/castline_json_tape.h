// The JSON parser's fast path in C: writes the same tape as CastCore's Swift `JSONParser` for the
// documents Cast devices send (no escapes, numbers that convert exactly), and declines everything
// else, which the Swift parser then handles (including every error, with its offset and reason).
// Strings are scanned 16 bytes at a time with SSE2 (x86-64) or NEON (arm64), in words elsewhere.
#ifndef CASTLINE_JSON_TAPE_H
#define CASTLINE_JSON_TAPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One tape entry, laid out exactly as Swift's `JSONTapeEntry`: `header` holds the tag in bits
/// 0–6, the non-ASCII flag in bit 7 and a length or child count from bit 8 up; `payload` the
/// integer or double bits, a string's byte offset in the input, or for a container the index of
/// the entry after its last descendant.
typedef struct {
    uint64_t header;
    uint64_t payload;
} castline_json_tape_entry;

/// The document was declined: not valid JSON, or it has a string escape, a number that needs a
/// correctly rounded conversion, or nesting deeper than `max_depth`. Parse it in Swift.
#define CASTLINE_JSON_TAPE_DECLINED 0
/// The tape has fewer entries than the document needs; `length` entries always suffice.
#define CASTLINE_JSON_TAPE_FULL (-1)

/// Parses `input[0..<length]` (one JSON text, whitespace around it allowed) into `tape`; returns
/// the number of entries written (≥ 1), `CASTLINE_JSON_TAPE_DECLINED` or `CASTLINE_JSON_TAPE_FULL`.
/// Never reads outside `input`, never writes outside `tape[0..<capacity]`.
ptrdiff_t castline_json_tape_parse(const uint8_t *input, size_t length, castline_json_tape_entry *tape,
                                   size_t capacity, int max_depth);

#ifdef __cplusplus
}
#endif

#endif
