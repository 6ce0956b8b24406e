#include "castline_json_scan.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

static inline uint64_t load64(const uint8_t *p) { uint64_t w; memcpy(&w, p, 8); return w; }
static inline uint32_t load32(const uint8_t *p) { uint32_t w; memcpy(&w, p, 4); return w; }
static inline void store64(uint8_t *p, uint64_t w) { memcpy(p, &w, 8); }
static inline void store32(uint8_t *p, uint32_t w) { memcpy(p, &w, 4); }

static inline int needs_escape(uint8_t c) { return c < 0x20 || c == '"' || c == '\\'; }

/// Nonzero when one of the eight bytes is below 0x20, '"' or '\\' (bytes >= 0x80 never match).
static inline uint64_t word_needs_escape(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}

/// Copies bytes from `from` on until one needs an escape; returns its index (or length).
static size_t copy_bytes(uint8_t *dst, const uint8_t *src, size_t from, size_t length) {
    while (from < length && !needs_escape(src[from])) {
        dst[from] = src[from];
        from++;
    }
    return from;
}

/// Fewer than 16 bytes: overlapping words, no read outside `src`.
static size_t copy_short(uint8_t *dst, const uint8_t *src, size_t length) {
    if (length >= 8) {
        uint64_t head = load64(src), tail = load64(src + length - 8);
        if (!word_needs_escape(head) && !word_needs_escape(tail)) {
            store64(dst, head);
            store64(dst + length - 8, tail);
            return length;
        }
    } else if (length >= 4) {
        uint32_t head = load32(src), tail = load32(src + length - 4);
        if (!word_needs_escape((uint64_t)head << 32 | tail)) {
            store32(dst, head);
            store32(dst + length - 4, tail);
            return length;
        }
    }
    return copy_bytes(dst, src, 0, length);
}

#if defined(__SSE2__)
static inline unsigned block_mask(__m128i v) {
    const __m128i limit = _mm_set1_epi8(0x1F);
    __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(v, limit), limit);  // v <= 0x1F
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash)));
}

size_t castline_json_copy_plain(uint8_t *dst, const uint8_t *src, size_t length) {
    if (length < 16) return copy_short(dst, src, length);
    size_t i = 0;
    for (; i + 16 <= length; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        unsigned mask = block_mask(v);
        _mm_storeu_si128((__m128i *)(dst + i), v);
        if (mask) return i + (size_t)__builtin_ctz(mask);
    }
    if (i < length) {
        // The last 16 bytes, overlapping bytes already checked (they are clean, so the first
        // set bit is at or after i).
        size_t last = length - 16;
        __m128i v = _mm_loadu_si128((const __m128i *)(src + last));
        unsigned mask = block_mask(v);
        _mm_storeu_si128((__m128i *)(dst + last), v);
        if (mask) return last + (size_t)__builtin_ctz(mask);
    }
    return length;
}
#elif defined(__ARM_NEON)
static inline uint64_t block_mask(uint8x16_t v) {
    uint8x16_t hit = vorrq_u8(vcltq_u8(v, vdupq_n_u8(0x20)),
                              vorrq_u8(vceqq_u8(v, vdupq_n_u8('"')), vceqq_u8(v, vdupq_n_u8('\\'))));
    // Four bits per byte (the "shrn" movemask idiom).
    return vget_lane_u64(vreinterpret_u64_u8(vshrn_n_u16(vreinterpretq_u16_u8(hit), 4)), 0);
}

size_t castline_json_copy_plain(uint8_t *dst, const uint8_t *src, size_t length) {
    if (length < 16) return copy_short(dst, src, length);
    size_t i = 0;
    for (; i + 16 <= length; i += 16) {
        uint8x16_t v = vld1q_u8(src + i);
        uint64_t mask = block_mask(v);
        vst1q_u8(dst + i, v);
        if (mask) return i + (size_t)(__builtin_ctzll(mask) >> 2);
    }
    if (i < length) {
        size_t last = length - 16;
        uint8x16_t v = vld1q_u8(src + last);
        uint64_t mask = block_mask(v);
        vst1q_u8(dst + last, v);
        if (mask) return last + (size_t)(__builtin_ctzll(mask) >> 2);
    }
    return length;
}
#else
size_t castline_json_copy_plain(uint8_t *dst, const uint8_t *src, size_t length) {
    if (length < 16) return copy_short(dst, src, length);
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
        uint64_t w = load64(src + i);
        if (word_needs_escape(w)) return copy_bytes(dst, src, i, length);
        store64(dst + i, w);
    }
    return copy_bytes(dst, src, i, length);
}
#endif
