/* Test fixture: describes itself well, then dereferences NULL in init (SIGSEGV). The scan in a
 * child process must report the signal with this file and leave the plugin out; the host (and
 * `castline plugins list/inspect`) must go on. */
#include <castline_plugin.h>
#include <stddef.h>

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)host; (void)ctx; (void)config; (void)error;
    volatile int *nowhere = NULL;
    *nowhere = 1;
    return CASTLINE_OK;
}

CASTLINE_PLUGIN_DEFINE("test-crashes-in-init", "1.0", "segfaults in init", "Apache-2.0", init, NULL, NULL, 0)
