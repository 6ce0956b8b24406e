/* Test fixture: built for a newer minor than the host speaks (the descriptor written out by hand
 * to claim it). */
#include <castline_plugin.h>

static const castline_plugin_descriptor descriptor = {
    .abi_major = CASTLINE_PLUGIN_ABI_MAJOR, .abi_minor = CASTLINE_PLUGIN_ABI_MINOR + 1,
    .struct_size = sizeof(castline_plugin_descriptor), .feature_struct_size = sizeof(castline_feature),
    .id = "test-newer-minor", .version = "1.0", .description = "needs a newer host", .license = "Apache-2.0",
};

CASTLINE_PLUGIN_EXPORT(descriptor)
