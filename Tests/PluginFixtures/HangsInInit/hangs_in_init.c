/* Test fixture: describes itself well, then never returns from init. The scan in a child process
 * must give up after its time bound, kill the child and report the timeout with this file. */
#include <castline_plugin.h>
#include <unistd.h>

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)host; (void)ctx; (void)config; (void)error;
    for (;;) pause();
    return CASTLINE_OK;
}

CASTLINE_PLUGIN_DEFINE("test-hangs-in-init", "1.0", "never returns from init", "Apache-2.0", init, NULL, NULL, 0)
