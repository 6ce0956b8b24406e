#include "castline_json_tape.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

// Tags and flags of Swift's `JSONTapeEntry` (keep in step with JSONTape.swift).
enum {
    TAG_NULL = 0, TAG_FALSE = 1, TAG_TRUE = 2, TAG_INT = 3, TAG_DOUBLE = 4, TAG_STRING = 5,
    TAG_ARRAY = 7, TAG_OBJECT = 8,
};
#define NON_ASCII_FLAG 0x80ull
#define LENGTH_SHIFT 8

// Every parse function takes the position to parse at and returns the position after what it
// parsed (kept in a register, not in the parser's memory), or one of these two, which are larger
// than any input length.
#define DECLINED ((size_t)-1)
#define FULL ((size_t)-2)
#define FAILED(pos) ((pos) >= FULL)

typedef struct {
    const uint8_t *in;
    size_t length;
    castline_json_tape_entry *tape;
    size_t count;
    size_t capacity;
    int depth;
    int max_depth;
} parser;

/// Writes an entry; returns `pos`, or `FULL` when the tape has no room.
static inline __attribute__((always_inline)) size_t emit(parser *p, size_t pos, uint64_t header, uint64_t payload) {
    if (p->count == p->capacity) return FULL;
    p->tape[p->count].header = header;
    p->tape[p->count].payload = payload;
    p->count++;
    return pos;
}

static inline __attribute__((always_inline)) size_t skip_whitespace(const parser *p, size_t pos) {
    while (pos < p->length) {
        uint8_t c = p->in[pos];
        if (c > ' ' || (c != ' ' && c != '\n' && c != '\r' && c != '\t')) return pos;
        pos++;
    }
    return pos;
}

static inline uint64_t load64(const uint8_t *s) { uint64_t w; memcpy(&w, s, 8); return w; }

/// The last bytes of a string (fewer than 16 with SIMD): 8 at a time, then one by one.
static __attribute__((noinline)) size_t skip_plain_tail(const uint8_t *s, size_t pos, size_t length) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (pos + 8 <= length) {
        uint64_t w = load64(s + pos);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        // Borrows only run upwards from a byte that really matches, so the lowest flag is exact.
        uint64_t special = (((q - ones) & ~q) | ((b - ones) & ~b) | (w - ones * 0x20) | w) & highs;
        if (special != 0) return pos + (size_t)(__builtin_ctzll(special) >> 3);
        pos += 8;
    }
    while (pos < length) {
        uint8_t c = s[pos];
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return pos;
        pos++;
    }
    return pos;
}


/// The position of the first byte at or after `pos` that is '"', '\\', below 0x20 or at least
/// 0x80; `length` when there is none.
static inline __attribute__((always_inline)) size_t skip_plain(const uint8_t *s, size_t pos, size_t length) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
    while (pos + 16 <= length) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + pos));
        // Signed compare: bytes >= 0x80 are negative, so "below 0x20" catches them too.
        __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                                       _mm_cmplt_epi8(v, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(special);
        if (mask != 0) return pos + (size_t)__builtin_ctz(mask);
        pos += 16;
    }
#elif defined(__ARM_NEON)
    const uint8x16_t quote = vdupq_n_u8('"'), backslash = vdupq_n_u8('\\'), space = vdupq_n_u8(0x20),
                     high = vdupq_n_u8(0x80);
    while (pos + 16 <= length) {
        uint8x16_t v = vld1q_u8(s + pos);
        uint8x16_t special = vorrq_u8(vorrq_u8(vceqq_u8(v, quote), vceqq_u8(v, backslash)),
                                      vorrq_u8(vcltq_u8(v, space), vcgeq_u8(v, high)));
        uint64_t bits = vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(special), 4)), 0);
        if (bits != 0) return pos + (size_t)(__builtin_ctzll(bits) >> 2);
        pos += 16;
    }
#endif
    return skip_plain_tail(s, pos, length);
}

/// The position after the UTF-8 sequence whose lead byte (>= 0x80) is at `pos`, or 0 when it
/// is not valid UTF-8 (the same rules as the Swift parser's `validateUTF8Sequence`).
static size_t utf8_sequence_end(const uint8_t *s, size_t pos, size_t length) {
    uint8_t lead = s[pos], lower = 0x80, upper = 0xBF;
    size_t n;
    if (lead >= 0xC2 && lead <= 0xDF) n = 2;
    else if (lead == 0xE0) { n = 3; lower = 0xA0; }
    else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) n = 3;
    else if (lead == 0xED) { n = 3; upper = 0x9F; }
    else if (lead == 0xF0) { n = 4; lower = 0x90; }
    else if (lead >= 0xF1 && lead <= 0xF3) n = 4;
    else if (lead == 0xF4) { n = 4; upper = 0x8F; }
    else return 0;
    if (pos + n > length) return 0;
    if (s[pos + 1] < lower || s[pos + 1] > upper) return 0;
    for (size_t i = 2; i < n; i++) {
        if ((s[pos + i] & 0xC0) != 0x80) return 0;
    }
    return pos + n;
}

/// String contents from `pos`, just past the opening quote. Escapes are declined.
static inline __attribute__((always_inline)) size_t parse_string(parser *p, size_t pos) {
    size_t begin = pos;
    uint64_t flags = 0;
    for (;;) {
        pos = skip_plain(p->in, pos, p->length);
        if (pos >= p->length) return DECLINED;
        uint8_t c = p->in[pos];
        if (c == '"') return emit(p, pos + 1, TAG_STRING | flags | (uint64_t)(pos - begin) << LENGTH_SHIFT, begin);
        if (c < 0x80) return DECLINED;  // an escape or a control character
        flags = NON_ASCII_FLAG;
        pos = utf8_sequence_end(p->in, pos, p->length);
        if (pos == 0) return DECLINED;
    }
}

static const double exact_powers_of_ten[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static inline size_t emit_double(parser *p, size_t pos, double value) {
    uint64_t bits;
    memcpy(&bits, &value, 8);
    return emit(p, pos, TAG_DOUBLE, bits);
}

/// The Swift parser's number rules: integers that fit Int64 are ints, `-0` is a double; other
/// numbers with at most 19 significant digits, a mantissa up to 2^53 and a decimal exponent
/// within ±22 are one exact multiplication or division (Clinger's fast path). The rest, and
/// every malformed number, is declined.
static inline __attribute__((always_inline)) size_t parse_number(parser *p, size_t pos) {
    const uint8_t *s = p->in;
    size_t length = p->length;
    int negative = 0;
    if (s[pos] == '-') { negative = 1; pos++; }
    if (pos >= length) return DECLINED;
    uint64_t mantissa = 0;
    int significant = 0, exponent10 = 0, is_integer = 1;
    if (s[pos] == '0') {
        pos++;
        if (pos < length && is_digit(s[pos])) return DECLINED;
    } else if (s[pos] >= '1' && s[pos] <= '9') {
        while (pos < length && is_digit(s[pos])) {
            if (significant >= 19) return DECLINED;  // more digits than a uint64 holds exactly
            mantissa = mantissa * 10 + (uint64_t)(s[pos] - '0');
            if (mantissa != 0) significant++;
            pos++;
        }
    } else {
        return DECLINED;
    }
    if (pos < length && s[pos] == '.') {
        is_integer = 0;
        pos++;
        if (pos >= length || !is_digit(s[pos])) return DECLINED;
        while (pos < length && is_digit(s[pos])) {
            if (significant >= 19) return DECLINED;
            mantissa = mantissa * 10 + (uint64_t)(s[pos] - '0');
            if (mantissa != 0) significant++;
            exponent10--;
            pos++;
        }
    }
    if (pos < length && (s[pos] | 0x20) == 'e') {
        is_integer = 0;
        pos++;
        int exponent_negative = 0;
        if (pos < length && (s[pos] == '+' || s[pos] == '-')) { exponent_negative = s[pos] == '-'; pos++; }
        if (pos >= length || !is_digit(s[pos])) return DECLINED;
        int exponent = 0;
        while (pos < length && is_digit(s[pos])) {
            if (exponent < 1000000) exponent = exponent * 10 + (s[pos] - '0');
            pos++;
        }
        exponent10 += exponent_negative ? -exponent : exponent;
    }
    if (is_integer) {
        if (mantissa == 0) return negative ? emit_double(p, pos, -0.0) : emit(p, pos, TAG_INT, 0);
        if (!negative) {
            if (mantissa <= (uint64_t)INT64_MAX) return emit(p, pos, TAG_INT, mantissa);
        } else if (mantissa <= (uint64_t)INT64_MAX + 1) {
            return emit(p, pos, TAG_INT, 0 - mantissa);
        }
    }
    if (mantissa == 0) return emit_double(p, pos, negative ? -0.0 : 0.0);
    if (mantissa <= (1ull << 53) && exponent10 >= -22 && exponent10 <= 22) {
        double value = (double)mantissa;
        if (exponent10 < 0) value /= exact_powers_of_ten[-exponent10];
        else value *= exact_powers_of_ten[exponent10];
        return emit_double(p, pos, negative ? -value : value);
    }
    return DECLINED;
}

static size_t parse_container(parser *p, size_t pos, int is_object);
static inline __attribute__((always_inline)) size_t parse_value(parser *p, size_t pos);

static inline size_t literal(parser *p, size_t pos, const char *text, size_t n, uint64_t tag) {
    if (p->length - pos < n || memcmp(p->in + pos, text, n) != 0) return DECLINED;
    return emit(p, pos + n, tag, 0);
}

static inline void close_container(parser *p, size_t slot, uint64_t tag, uint64_t children) {
    p->tape[slot].header = tag | children << LENGTH_SHIFT;
    p->tape[slot].payload = p->count;
    p->depth--;
}

/// An array or an object from `pos` (its opening bracket).
static size_t parse_container(parser *p, size_t pos, int is_object) {
    if (++p->depth > p->max_depth) return DECLINED;
    if (p->count == p->capacity) return FULL;
    size_t slot = p->count++;
    const uint8_t *in = p->in;
    size_t length = p->length;
    uint64_t tag = is_object ? TAG_OBJECT : TAG_ARRAY;
    uint8_t closing = is_object ? '}' : ']';
    pos = skip_whitespace(p, pos + 1);
    if (pos >= length) return DECLINED;
    uint64_t children = 0;
    if (in[pos] != closing) {
        for (;;) {
            if (is_object) {
                if (pos >= length || in[pos] != '"') return DECLINED;
                pos = parse_string(p, pos + 1);
                if (FAILED(pos)) return pos;
                pos = skip_whitespace(p, pos);
                if (pos >= length || in[pos] != ':') return DECLINED;
                pos = skip_whitespace(p, pos + 1);
            }
            pos = parse_value(p, pos);  // inlined: scalars here, containers by recursion
            if (FAILED(pos)) return pos;
            children++;
            pos = skip_whitespace(p, pos);
            if (pos >= length) return DECLINED;
            if (in[pos] == ',') {
                pos = skip_whitespace(p, pos + 1);
            } else if (in[pos] == closing) {
                break;
            } else {
                return DECLINED;
            }
        }
    }
    close_container(p, slot, tag, children);
    return pos + 1;
}

/// One value from `pos`: scalars in place, containers by `parse_container`.
static inline __attribute__((always_inline)) size_t parse_value(parser *p, size_t pos) {
    if (pos >= p->length) return DECLINED;
    switch (p->in[pos]) {
    case '{': return parse_container(p, pos, 1);
    case '[': return parse_container(p, pos, 0);
    case '"': return parse_string(p, pos + 1);
    case 't': return literal(p, pos, "true", 4, TAG_TRUE);
    case 'f': return literal(p, pos, "false", 5, TAG_FALSE);
    case 'n': return literal(p, pos, "null", 4, TAG_NULL);
    default: return parse_number(p, pos);
    }
}

ptrdiff_t castline_json_tape_parse(const uint8_t *input, size_t length, castline_json_tape_entry *tape,
                                   size_t capacity, int max_depth) {
    if (length == 0) return CASTLINE_JSON_TAPE_DECLINED;
    parser p = { input, length, tape, 0, capacity, 0, max_depth };
    size_t pos = parse_value(&p, skip_whitespace(&p, 0));
    if (pos == FULL) return CASTLINE_JSON_TAPE_FULL;
    if (FAILED(pos) || skip_whitespace(&p, pos) != length) return CASTLINE_JSON_TAPE_DECLINED;
    return (ptrdiff_t)p.count;
}
