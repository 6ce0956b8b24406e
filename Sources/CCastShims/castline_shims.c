#define _GNU_SOURCE
#include "castline_shims.h"

#include <link.h>
#include <stddef.h>
#include <malloc.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

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

struct segment_walk {
    castline_segment *out;
    size_t capacity;
    size_t count;
    size_t objects;
};

static int castline_collect_segments(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct segment_walk *walk = data;
    walk->objects += 1;
    for (size_t i = 0; i < info->dlpi_phnum && walk->count < walk->capacity; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type != PT_LOAD) continue;
        castline_segment *segment = &walk->out[walk->count++];
        segment->start = (unsigned long)(info->dlpi_addr + header->p_vaddr);
        segment->end = segment->start + (unsigned long)header->p_memsz;
        segment->readable = (header->p_flags & PF_R) != 0;
        segment->executable = (header->p_flags & PF_X) != 0;
    }
    return 0;
}

size_t castline_loaded_segments(castline_segment *out, size_t capacity, size_t *objects) {
    struct segment_walk walk = {out, capacity, 0, 0};
    dl_iterate_phdr(castline_collect_segments, &walk);
    if (objects) *objects = walk.objects;
    return walk.count;
}

static int castline_first_generation(struct dl_phdr_info *info, size_t size, void *data) {
    unsigned long long *generation = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        *generation = info->dlpi_adds + info->dlpi_subs;
    }
    return 1;
}

unsigned long long castline_loaded_generation(void) {
    unsigned long long generation = 0;
    dl_iterate_phdr(castline_first_generation, &generation);
    return generation;
}

long castline_read_own_memory(void *local, const void *remote, size_t count) {
    struct iovec to = {local, count};
    struct iovec from = {(void *)remote, count};
    return (long)process_vm_readv(getpid(), &to, 1, &from, 1, 0);
}
