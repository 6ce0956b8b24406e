// C functions Swift's Glibc module does not export.
#ifndef CASTLINE_SHIMS_H
#define CASTLINE_SHIMS_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// glibc's memmem (a GNU extension Swift's Glibc module does not export): the first occurrence
/// of `needle` in `haystack`, or NULL.
const void *castline_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/// What glibc's malloc holds (mallinfo2): bytes in use (arena chunks and mmapped ones), bytes
/// free inside the arenas (resident or not), and of the bytes in use those in blocks malloc
/// mapped on their own, with their count.
typedef struct {
    size_t in_use;
    size_t free;
    size_t mapped;
    size_t mapped_blocks;
} castline_heap_statistics;

castline_heap_statistics castline_heap_statistics_now(void);

/// glibc's malloc_trim(0): gives every whole free page in every arena back to the system
/// (madvise), not only the top of each heap. 1 if memory was released.
int castline_heap_trim(void);

/// glibc's mallopt(M_MMAP_THRESHOLD, bytes): every later request of `bytes` or more gets a
/// mapping of its own, unmapped when freed, and the threshold no longer adapts. 1 on success.
int castline_heap_set_mmap_threshold(size_t bytes);

/// Starts the program at `path` (absolute) with `argv` (NULL-terminated) and the caller's
/// environment, tethered to this process: in a process group of its own (so one kill(-pid)
/// ends it and whatever it starts), stdin from /dev/null, stdout and stderr onto `stdout_fd` and
/// `stderr_fd` (-1: /dev/null), default signal dispositions and an empty signal mask, and
/// PR_SET_PDEATHSIG = SIGKILL, so it dies with castline even when castline is SIGKILLed.
/// The death signal follows the *thread* that forked, so every fork happens on one spawner
/// thread that never exits. Returns the child's pid, or -errno.
pid_t castline_spawn_tethered(const char *path, char *const argv[], int stdout_fd, int stderr_fd);

#ifdef __cplusplus
}
#endif

#endif
