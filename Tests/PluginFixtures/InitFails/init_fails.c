/* Test fixture: init fails with a reason. */
#include <castline_plugin.h>
#include <stdio.h>

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)host; (void)ctx; (void)config;
    snprintf(error.text, error.capacity, "cannot read /nonexistent/test-device.conf: No such file or directory");
    return CASTLINE_ERR_FAILED;
}

CASTLINE_PLUGIN_DEFINE("test-init-fails", "1.0", "init fails", "Apache-2.0", init, NULL, NULL, 0)
