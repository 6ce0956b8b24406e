/* Test fixture: init fails with a reason. */
#include <castline_plugin.h>
#include <stdio.h>

static int32_t init(const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                    castline_error_buffer error) {
    (void)host; (void)ctx; (void)config;
    snprintf(error.text, error.capacity, "cannot read /nonexistent/test-device.conf: No such file or directory");
    return CASTLINE_ERR_FAILED;
}

static const castline_plugin_descriptor descriptor = {
    .abi_major = CASTLINE_PLUGIN_ABI_MAJOR, .abi_minor = CASTLINE_PLUGIN_ABI_MINOR,
    .struct_size = sizeof(castline_plugin_descriptor), .feature_struct_size = sizeof(castline_feature),
    .id = "test-init-fails", .version = "1.0", .description = "init fails", .license = "Apache-2.0",
    .init = init,
};

const castline_plugin_descriptor *castline_plugin_v1_describe(void) { return &descriptor; }
