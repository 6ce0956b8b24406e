/* Test fixture: a descriptor that claims ABI major 2 behind the v1 symbol. */
#include <castline_plugin.h>

static const castline_plugin_descriptor descriptor = {
    .abi_major = 2, .abi_minor = 0, .struct_size = sizeof(castline_plugin_descriptor),
    .feature_struct_size = sizeof(castline_feature), .id = "test-bad-major", .version = "1.0",
    .description = "claims ABI 2", .license = "Apache-2.0",
};

const castline_plugin_descriptor *castline_plugin_v1_describe(void) { return &descriptor; }
