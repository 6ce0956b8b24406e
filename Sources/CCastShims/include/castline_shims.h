// C functions Swift's Glibc module does not export.
#ifndef CASTLINE_SHIMS_H
#define CASTLINE_SHIMS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// glibc's memmem (a GNU extension Swift's Glibc module does not export): the first occurrence
/// of `needle` in `haystack`, or NULL.
const void *castline_memmem(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

#ifdef __cplusplus
}
#endif

#endif
