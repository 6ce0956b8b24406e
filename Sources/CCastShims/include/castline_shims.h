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

/// One loaded segment (PT_LOAD) of an image in this process: its address range and whether it
/// is readable and executable.
typedef struct {
    unsigned long start;
    unsigned long end;
    int readable;
    int executable;
} castline_segment;

/// The PT_LOAD segments of every object loaded now (dl_iterate_phdr), at most `capacity` of them
/// into `out`; returns how many were written, and the number of loaded objects in `objects`.
size_t castline_loaded_segments(castline_segment *out, size_t capacity, size_t *objects);

/// How many objects were ever loaded and unloaded (glibc's dlpi_adds + dlpi_subs): changes
/// whenever the set of loaded objects does. Cheap: one step of dl_iterate_phdr.
unsigned long long castline_loaded_generation(void);

/// process_vm_readv on this process: copies `count` bytes at `remote` into `local`; the bytes
/// copied, or -1 (errno EFAULT for an unreadable address).
long castline_read_own_memory(void *local, const void *remote, size_t count);

/// An isolated plugin's helper process: on a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT),
/// write the last noted records and a `crashReport` frame (signal, callback, stack frames) to
/// `fd`, then die of the signal. Call once, early.
void castline_crash_reporter_install(int fd);

/// The plugin callback running now (a static string such as "on_message"), or NULL between calls.
void castline_crash_reporter_set_callback(const char *callback);

/// Around each frame a helper's thread writes on the crash reporter's socket: the report never
/// lands inside another frame. `begin` returns 0 once the crash handler has the socket (the
/// process is ending: write nothing).
int castline_frame_write_begin(void);
void castline_frame_write_end(void);

/// The daemon: on a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), append one JSON Lines
/// record (class `CrashReporter`: the signal, the faulting library and symbol, the stack) to `fd`
/// (the JSON sink's file, opened beforehand with O_APPEND), then hand the signal to the handler
/// that was installed before. Call once, after the runtime's own handlers are in place.
void castline_crash_record_install(int fd);

/// Keeps a copy of one record's `log` frame JSON (the last 8, at most 2 KiB each) for the crash report.
void castline_crash_reporter_note_record(const char *json, size_t length);

#ifdef __cplusplus
}
#endif

#endif
