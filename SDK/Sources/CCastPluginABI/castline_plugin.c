/* Header-only target: the ABI lives in include/castline_plugin.h. */
