/* Test fixture: a descriptor that claims ABI major 2 behind the v1 symbol (written out by hand:
 * CASTLINE_PLUGIN_DEFINE would fill in the right major). */
#include <castline_plugin.h>

static const castline_plugin_descriptor descriptor = {
    .abi_major = 2, .abi_minor = 0, .struct_size = sizeof(castline_plugin_descriptor),
    .feature_struct_size = sizeof(castline_feature), .id = "test-bad-major", .version = "1.0",
    .description = "claims ABI 2", .license = "Apache-2.0",
};

CASTLINE_PLUGIN_EXPORT(descriptor)
