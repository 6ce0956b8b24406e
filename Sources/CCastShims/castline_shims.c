#define _GNU_SOURCE
#include "castline_shims.h"

#include <malloc.h>
#include <string.h>

const void *castline_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    return memmem(haystack, haystack_length, needle, needle_length);
}

castline_heap_statistics castline_heap_statistics_now(void) {
    struct mallinfo2 info = mallinfo2();
    castline_heap_statistics statistics = {
        .in_use = info.uordblks + info.hblkhd, .free = info.fordblks, .mapped = info.hblkhd, .mapped_blocks = info.hblks,
    };
    return statistics;
}

int castline_heap_set_mmap_threshold(size_t bytes) {
    return mallopt(M_MMAP_THRESHOLD, (int)bytes);
}

int castline_heap_trim(void) {
    return malloc_trim(0);
}
