/* Test fixture: another plugin with a discovery feature of the same id as test-good's, at a
 * higher rank (10), so the host must pick it over test-good's (rank 0). */
#include <castline_plugin.h>
#include <stdlib.h>

static int32_t start(void *userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config,
                     const char *app_ids, void **out, castline_error_buffer error) {
    (void)userdata; (void)host; (void)ctx; (void)config; (void)app_ids; (void)error;
    *out = NULL;
    return CASTLINE_OK;
}

static void stop(void *state) { (void)state; }

static const char *const service_types[] = {"_googlecast._tcp", NULL};
static const castline_discovery_vtable discovery = {
    .version = CASTLINE_PLUGIN_ABI_MINOR, .struct_size = sizeof(castline_discovery_vtable),
    .service_types = service_types, .start = start, .stop = stop,
};

static const castline_feature features[] = {
    {.kind = CASTLINE_FEATURE_DISCOVERY, .rank = 10, .id = "test-discovery", .vtable = &discovery},
};

CASTLINE_PLUGIN_DEFINE("test-ranked", "1.0", "same feature id as test-good, higher rank", "Apache-2.0", NULL, NULL,
                       features, CASTLINE_FEATURE_COUNT(features))
