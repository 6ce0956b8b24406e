/*
 * castline plugin ABI — the only thing a plugin and the castline host share.
 *
 * A plugin is a shared object exporting one symbol, CASTLINE_PLUGIN_ENTRY_SYMBOL
 * ("castline_plugin_v1_describe"), that returns a static castline_plugin_descriptor. Write it
 * with CASTLINE_PLUGIN_DEFINE (or CASTLINE_PLUGIN_EXPORT for a descriptor of your own), never by
 * hand. The host loads it with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) and never unloads it.
 *
 * Compatibility rules (checked by the host before anything else is read):
 *   - descriptor.abi_major == CASTLINE_PLUGIN_ABI_MAJOR (the major is also in the symbol name);
 *   - descriptor.abi_minor <= the host's minor;
 *   - every struct starts with (version or abi fields, struct_size); the host reads at most
 *     struct_size bytes of a plugin struct and zero-fills the rest, so fields appended in a later
 *     minor read as NULL/0 from an older plugin. A struct_size smaller than the 1.0 size
 *     (CASTLINE_*_SIZE_1_0 below: frozen literals, not sizeof) is refused;
 *   - the host's own table (castline_host_services) grows the same way: test a field appended
 *     after 1.0 with CASTLINE_HOST_HAS(host, field) before calling it;
 *   - castline_log_record and castline_field are handed to a plugin as arrays, so their stride is
 *     part of the ABI: they are frozen at their 1.0 layout for all of major 1. A later minor that
 *     needs more adds a new struct and a new vtable entry that takes it.
 * The layout is pinned below with static assertions for LP64 Linux (x86_64, aarch64), the
 * platforms castline runs on.
 *
 * Strings. Only C scalars, UTF-8 strings and JSON text cross the boundary, and every string is
 * NUL-terminated, in both directions:
 *   - a plugin hands the host NUL-terminated strings only (every host service takes `const char *`
 *     without a length, JSON included: JSON text never contains a raw NUL);
 *   - the host hands a plugin NUL-terminated strings; where a length comes along (payloads, log
 *     record fields) it is the byte count without the NUL, a convenience that equals strlen.
 * Strings handed to a plugin are valid only during the call; copy what you keep. Strings a plugin
 * hands to the host are copied by the host before the call returns.
 *
 * Bounds. The host trusts no pointer, length, size, count or NUL a plugin hands over: it reads
 * them without faulting (memory that is not readable is refused, never read past) and refuses,
 * with an error record naming the plugin and the problem, anything over these bounds:
 *   - a descriptor's, a feature's or a vtable's struct_size: at most 4096 bytes;
 *   - feature_count: at most 256, and the whole array readable (a count past the array's end, or
 *     entries that are no feature, refuse the whole plugin);
 *   - every function pointer in a descriptor or vtable: inside the code of a loaded image;
 *   - ids: at most 64 bytes ([a-z0-9._-]); namespaces 128; class names, field keys and
 *     destinations 256; version, description, license, file and function names 4096; log
 *     messages and field strings 65536 (each before its NUL);
 *   - JSON text (send_message, complete_command, device_found, control_request): 1 MiB;
 *   - a media-format probe's emit: at most 1 MiB, the bytes readable;
 *   - log fields: the first 64, the array readable.
 * A plugin that does not ship with castline runs in a helper process unless the config's
 * plugins.in_process lists it; there a crash, a hang or going over plugins.limits restarts it.
 *
 * Threading: every call into one feature instance (open, on_message, command, timer callbacks,
 * close, stop) is serialized by the host on that instance's own queue; log-sink write/flush run on
 * the sink's worker thread, one call at a time; media-format probe may run on any thread,
 * concurrently (keep it pure). Host services may be called from any thread.
 *
 * "since" notes give the ABI version a field appeared in. 1.1 added the bridge feature kind
 * (castline_bridge_vtable) and two host services for it (control_request, events_subscribe);
 * everything else is ABI 1.0, unchanged.
 */
#ifndef CASTLINE_PLUGIN_H
#define CASTLINE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CASTLINE_PLUGIN_ABI_MAJOR 1 /* since 1.0 */
#define CASTLINE_PLUGIN_ABI_MINOR 2 /* since 1.0 (1.1: the bridge kind; 1.2: a channel hears its app) */
/* The one exported symbol: a castline_plugin_describe_fn. The major is part of the name so a
 * plugin built for another major is recognised as such instead of misread. (since 1.0)
 * CASTLINE_PLUGIN_DEFINE / CASTLINE_PLUGIN_EXPORT below define it. */
#define CASTLINE_PLUGIN_ENTRY_SYMBOL "castline_plugin_v1_describe"

/* Log levels, numbered like GCKLoggerLevel. (since 1.0) */
typedef enum castline_level {
    CASTLINE_LEVEL_NONE = 0,
    CASTLINE_LEVEL_VERBOSE = 1,
    CASTLINE_LEVEL_DEBUG = 2,
    CASTLINE_LEVEL_INFO = 3,
    CASTLINE_LEVEL_WARNING = 4,
    CASTLINE_LEVEL_ERROR = 5,
    CASTLINE_LEVEL_ASSERT = 6
} castline_level;

/* What a feature provides. (since 1.0) */
typedef enum castline_feature_kind {
    CASTLINE_FEATURE_DISCOVERY = 1,    /* vtable: castline_discovery_vtable */
    CASTLINE_FEATURE_CHANNEL = 2,      /* vtable: castline_channel_vtable */
    CASTLINE_FEATURE_MEDIA_FORMAT = 3, /* vtable: castline_media_format_vtable */
    CASTLINE_FEATURE_LOG_SINK = 4,     /* vtable: castline_log_sink_vtable */
    CASTLINE_FEATURE_BRIDGE = 5        /* since 1.1; vtable: castline_bridge_vtable */
} castline_feature_kind;

/* Result codes of host services and plugin calls. 0 is success. (since 1.0) */
typedef enum castline_status {
    CASTLINE_OK = 0,
    CASTLINE_ERR_INVALID_ARGUMENT = 1, /* NULL where a value is needed, bad level, unknown handle */
    CASTLINE_ERR_INVALID_JSON = 2,     /* text that must be JSON is not (the host logs why) */
    CASTLINE_ERR_UNDECLARED = 3,       /* namespace or service type the feature did not declare */
    CASTLINE_ERR_NOT_CONNECTED = 4,    /* nothing to send to: no app runs on the channel's session
                                        * (destination NULL or a transportId), or it has ended */
    CASTLINE_ERR_FAILED = 5            /* anything else; the error text says what */
} castline_status;

/* A structured log field. value_type says how to read value. (since 1.0) */
typedef enum castline_value_type {
    CASTLINE_VALUE_STRING = 0, /* string: UTF-8 */
    CASTLINE_VALUE_INT = 1,    /* int_value */
    CASTLINE_VALUE_DOUBLE = 2, /* double_value */
    CASTLINE_VALUE_BOOL = 3    /* int_value 0 or 1 */
} castline_value_type;

/* Frozen at its 1.0 layout (an array element): see the compatibility rules above. */
typedef struct castline_field {
    const char *key;       /* since 1.0: NUL-terminated */
    size_t key_length;     /* since 1.0: bytes, without the NUL */
    int32_t value_type;    /* since 1.0: castline_value_type */
    const char *string;    /* since 1.0: CASTLINE_VALUE_STRING only, NUL-terminated */
    size_t string_length;  /* since 1.0 */
    int64_t int_value;     /* since 1.0 */
    double double_value;   /* since 1.0 */
} castline_field;

/* One log record as a log sink receives it. All strings NUL-terminated, lengths without the NUL.
 * Frozen at its 1.0 layout (an array element): see the compatibility rules above. */
typedef struct castline_log_record {
    uint64_t timestamp_ns;        /* since 1.0: wall clock, ns since the Unix epoch */
    int32_t level;                /* since 1.0: castline_level, never NONE */
    uint32_t line;                /* since 1.0: 0 when unknown */
    const char *class_name;       /* since 1.0: emitting type, e.g. "CastSession" */
    size_t class_name_length;     /* since 1.0 */
    const char *message;          /* since 1.0 */
    size_t message_length;        /* since 1.0 */
    const char *file;             /* since 1.0: "#fileID" form, may be "" */
    size_t file_length;           /* since 1.0 */
    const char *function;         /* since 1.0: may be "" */
    size_t function_length;       /* since 1.0 */
    const castline_field *fields; /* since 1.0: field_count entries, in order */
    size_t field_count;           /* since 1.0 */
} castline_log_record;

/* Opaque handle the host gives to a plugin (init) or to one feature instance (open/start).
 * Pass it back to host services; it tells the host who is calling. (since 1.0) */
typedef struct castline_host_ctx castline_host_ctx;

/* Services the host offers. Versioned: test a field appended after 1.0 with
 * CASTLINE_HOST_HAS(host, field) before calling it. Every function may be called from any thread.
 * Every string argument is NUL-terminated (see "Strings" above); none takes a length. */
typedef struct castline_host_services {
    uint32_t version;     /* since 1.0: host ABI minor (major is CASTLINE_PLUGIN_ABI_MAJOR) */
    uint32_t struct_size; /* since 1.0: sizeof(castline_host_services) in the host */

    /* since 1.0: emit a record through the host's filter, under class_name (the plugin's own
     * class, e.g. "AvahiBrowser"). fields may be NULL when field_count is 0. file/function may be NULL. */
    void (*log)(castline_host_ctx *ctx, int32_t level, const char *class_name, const char *message,
                const castline_field *fields, size_t field_count, const char *file, uint32_t line,
                const char *function);
    /* since 1.0: 1 when a record of this level and class would be emitted, else 0. Cheap. */
    int32_t (*level_enabled)(castline_host_ctx *ctx, int32_t level, const char *class_name);

    /* since 1.0 (channel instances): send a JSON payload on `namespace_` to destination_id, one of:
     *   NULL or "":   the app the session has joined (its transport_id when the call is made);
     *   the app's transport_id (as session_json gave it): the same, refused when that app is no
     *                 longer the one running (CASTLINE_ERR_INVALID_ARGUMENT while another app runs,
     *                 CASTLINE_ERR_NOT_CONNECTED when none does);
     *   "receiver-0": the receiver platform, for its own namespaces (multizone, for example).
     * Any other value is refused with CASTLINE_ERR_INVALID_ARGUMENT: a sender talks to the app it
     * joined and to the platform, nothing else on the device.
     * CASTLINE_OK means the message is queued on the device's connection before the call returns:
     * a channel's messages go out in the order its calls returned (calls from several threads at
     * once are ordered by the connection, not by the caller); a send the connection then fails
     * is logged, not reported.
     * Works from inside open: the namespaces are attached to the session before open is called,
     * so with an app running a message sent there reaches it; with no app running (a device
     * session following an idle device) a message to the app is refused with
     * CASTLINE_ERR_NOT_CONNECTED. Also refused: CASTLINE_ERR_UNDECLARED when the feature did not
     * declare the namespace, CASTLINE_ERR_INVALID_JSON when payload is not JSON.
     * payload: NUL-terminated JSON text. */
    int32_t (*send_message)(castline_host_ctx *ctx, const char *namespace_, const char *destination_id,
                            const char *payload);
    /* since 1.0 (channel instances): finish the command `command_id` with a JSON result
     * (status CASTLINE_OK) or an error text (any other status), NUL-terminated. Exactly once per
     * command. */
    int32_t (*complete_command)(castline_host_ctx *ctx, uint64_t command_id, int32_t status,
                                const char *json_or_error);

    /* since 1.0: call fire(user) after delay_ms, then every repeat_ms (0: once), on the
     * caller's feature queue. Returns a timer id > 0, or 0 on failure. */
    uint64_t (*timer_start)(castline_host_ctx *ctx, uint64_t delay_ms, uint64_t repeat_ms,
                            void (*fire)(void *user), void *user);
    /* since 1.0: no further fire after this returns (unless called from inside that fire). */
    void (*timer_cancel)(castline_host_ctx *ctx, uint64_t timer_id);

    /* since 1.0 (discovery instances): a device appeared or changed. device_json is an object:
     * {"id","name","host","port", optional "model","addresses":[...],"service_type","capabilities",
     * "status_text","app_ids":[...],"icon_path","interface"}, NUL-terminated. */
    int32_t (*device_found)(castline_host_ctx *ctx, const char *device_json);
    /* since 1.0 (discovery instances): the device with this id is gone. */
    int32_t (*device_lost)(castline_host_ctx *ctx, const char *device_id);
    /* since 1.0 (discovery instances): the medium is unusable (NULL when it recovered), e.g.
     * "avahi-daemon is not running". Shown when the device list is empty. */
    int32_t (*discovery_problem)(castline_host_ctx *ctx, const char *problem_or_null);

    /* since 1.1 (bridge instances): one request to the daemon's control API, exactly as the HTTP
     * API takes it, as NUL-terminated JSON: {"method": "GET"|"POST"|"PUT"|"DELETE", "path":
     * "/v1/devices/Lobby/cast" (percent-encoded segments, an optional ?query), "body": {...}
     * (optional; PUT /v1/jobs/{name} takes the job object)}. CASTLINE_OK means it is queued; the
     * answer comes later, exactly once, through the bridge vtable's on_reply with the same
     * request_id (the plugin's own number), the HTTP status and the same JSON body the HTTP API
     * answers with (errors included: {"error": {"code", "message"}}). Every command goes through
     * the daemon's one control plane, as an API or CLI request does. The event stream
     * (/v1/events) and /metrics are not requests: events come through events_subscribe.
     * CASTLINE_ERR_INVALID_JSON when the text is not JSON, CASTLINE_ERR_INVALID_ARGUMENT when it
     * is not a request object or the caller is no bridge instance. */
    int32_t (*control_request)(castline_host_ctx *ctx, uint64_t request_id, const char *request_json);
    /* since 1.1 (bridge instances): deliver the hub's events (GET /v1/events' JSON objects, one
     * per call to the vtable's on_event) of `kinds` — comma-separated ("device,media,job"), NULL
     * or "" for every kind — from now on. A second call replaces the subscription. A bridge
     * that does not keep up loses its oldest events and the next one says how many ("lost": N). */
    int32_t (*events_subscribe)(castline_host_ctx *ctx, const char *kinds);
} castline_host_services;

/* Writes an error text for the host into a caller-provided buffer (may be truncated). */
typedef struct castline_error_buffer {
    char *text;      /* since 1.0 */
    size_t capacity; /* since 1.0: bytes including the NUL */
} castline_error_buffer;

/* A discovery feature: browses for Cast devices and reports them with device_found/lost. */
typedef struct castline_discovery_vtable {
    uint32_t version;     /* since 1.0: ABI minor the vtable was built with */
    uint32_t struct_size; /* since 1.0 */
    /* since 1.0: NULL-terminated DNS-SD service types browsed ("_googlecast._tcp"). Required:
     * the host refuses a discovery feature that declares none or one the config does not allow. */
    const char *const *service_types;
    /* since 1.0: start browsing; keep ctx for host calls. config_json is the plugin's config
     * object ("{}" when none). app_ids_json is an array of receiver app ids to check support for.
     * Return CASTLINE_OK and set *out_state, or an error status with a text in error. */
    int32_t (*start)(void *feature_userdata, const castline_host_services *host, castline_host_ctx *ctx, const char *config_json,
                     const char *app_ids_json, void **out_state, castline_error_buffer error);
    /* since 1.0: stop browsing and free state. No host call for this instance afterwards. */
    void (*stop)(void *state);
} castline_discovery_vtable;

/* A channel feature: one instance per session, owning custom namespaces. */
typedef struct castline_channel_vtable {
    uint32_t version;     /* since 1.0 */
    uint32_t struct_size; /* since 1.0 */
    /* since 1.0: NULL-terminated namespaces ("urn:x-cast:com.example.echo"). Required. */
    const char *const *namespaces;
    /* since 1.0: a session opened; session_json = {"device_id", and when an app runs
     * "session_id","transport_id","app_id"}. send_message may be called from here. Messages the
     * app sends before open returns are delivered (on_message) after it. */
    int32_t (*open)(void *feature_userdata, const castline_host_services *host, castline_host_ctx *ctx,
                    const char *config_json, const char *session_json, void **out_state, castline_error_buffer error);
    /* since 1.0: a message arrived on one of the declared namespaces. */
    void (*on_message)(void *state, const char *namespace_, const char *source_id, const char *payload,
                       size_t payload_length);
    /* since 1.0: the host asks for something: a JSON object. Answer later, exactly once, with
     * complete_command(ctx, command_id, ...); the host fails a command not answered in time.
     * Commands come from the daemon's API: POST /v1/devices/{device}/channels/{namespace} with
     * {"message": …} for a namespace the feature declares (a JSON object is the command, text
     * becomes {"text": "…"}), which is what `castline channel send|request --device D --namespace
     * NS MESSAGE` posts; the result is the answer's "reply". The daemon opens the feature on the
     * device's session at the first one. In a program embedding the host:
     * PluginHost.openChannel(id:on:), then PluginChannel.command(_:timeout:). */
    void (*command)(void *state, uint64_t command_id, const char *json, size_t json_length);
    /* since 1.0: the session ended; free state. Pending commands are failed by the host. */
    void (*close)(void *state);
    /* since 1.2 (NULL: not told): what happened to the app the channel talks to, a
     * castline_app_event, with info_json = {"device_id", and for the app concerned "app_id",
     * "session_id", "transport_id"; for CASTLINE_APP_STOPPED also "reason"}. Called on the
     * instance's queue like on_message, under the same time bound. After CASTLINE_APP_STOPPED a
     * send_message to the app is refused (CASTLINE_ERR_NOT_CONNECTED) until
     * CASTLINE_APP_RELAUNCHED; after CASTLINE_SESSION_RESUMED the app may have missed messages
     * sent while the link was down (the host's sends in that time were refused). */
    void (*on_app_event)(void *state, int32_t event, const char *info_json, size_t info_length);
} castline_channel_vtable;

/* What on_app_event reports. (since 1.2) */
typedef enum castline_app_event {
    CASTLINE_APP_STOPPED = 1,      /* the app stopped, closed, or another app replaced it */
    CASTLINE_APP_RELAUNCHED = 2,   /* an app runs again (a new app session): sends go to it */
    CASTLINE_SESSION_RESUMED = 3,  /* the link to the device came back after a drop */
} castline_app_event;

/* Receives the JSON result of a probe. Called at most once per probe, before probe returns. */
typedef void (*castline_json_emit_fn)(void *emit_ctx, const char *json, size_t length);

/* A media-format feature: derives contentType, streamType and VideoInfo from a URL/file/body. */
typedef struct castline_media_format_vtable {
    uint32_t version;     /* since 1.0 */
    uint32_t struct_size; /* since 1.0 */
    /* since 1.0: NULL-terminated content types it understands ("application/x-mpegURL"); "*" for any. */
    const char *const *content_types;
    /* since 1.0: analyse. url and content_type may be NULL, body may be NULL (body_length 0).
     * Emits one JSON object: {"content_type","stream_type","width","height","hdr_type",
     * "hdr_format","video_codecs":[...],"variant_uri","notes":[...]} (absent keys = unknown).
     * Returns CASTLINE_OK, or an error status with a text in error. Pure: may run concurrently. */
    int32_t (*probe)(void *feature_userdata, const char *url, const char *content_type, const uint8_t *body,
                     size_t body_length, castline_json_emit_fn emit, void *emit_ctx, castline_error_buffer error);
} castline_media_format_vtable;

/* A log-sink feature: receives every record the filter lets through, in batches. */
typedef struct castline_log_sink_vtable {
    uint32_t version;     /* since 1.0 */
    uint32_t struct_size; /* since 1.0 */
    /* since 1.0: config_json is the sink's options object (e.g. {"path": "...", "max_bytes": 2097152}). */
    int32_t (*open)(void *feature_userdata, const castline_host_services *host, castline_host_ctx *ctx,
                    const char *config_json, void **out_state, castline_error_buffer error);
    /* since 1.0: records, oldest first. Must not call the host's log (the host drops such records). */
    void (*write)(void *state, const castline_log_record *records, size_t count);
    /* since 1.0: make everything written durable. */
    void (*flush)(void *state);
    /* since 1.0: flush and free state. */
    void (*close)(void *state);
    /* since 1.0: records the sink itself lost (e.g. journald refused them); 0 if none. May be NULL. */
    uint64_t (*dropped)(void *state);
    /* since 1.0: 1 and a text in `out` while the sink cannot deliver (e.g. "journald socket
     * /run/systemd/journal/socket not found"), 0 when it delivers. Polled by the host after each
     * write; the host reports each change once, as a record to the other sinks. May be NULL. */
    int32_t (*problem)(void *state, castline_error_buffer out);
} castline_log_sink_vtable;

/* A bridge feature (since 1.1): carries the daemon's control API and event stream to another
 * system (an MQTT broker, for example). One instance per daemon, started after the API is up and
 * stopped before it goes; every call into it runs on the instance's queue, bounded like a
 * channel's. A host that offers bridges has a castline_host_services of at least
 * CASTLINE_HOST_SERVICES_SIZE_1_1. */
typedef struct castline_bridge_vtable {
    uint32_t version;     /* since 1.1 */
    uint32_t struct_size; /* since 1.1 */
    /* since 1.1: start; keep ctx for control_request / events_subscribe. config_json is the
     * plugin's config object. Start the bridge's own threads (a network loop) here and return:
     * the call is bounded. Return CASTLINE_OK and set *out_state, or an error with a text. */
    int32_t (*start)(void *feature_userdata, const castline_host_services *host, castline_host_ctx *ctx,
                     const char *config_json, void **out_state, castline_error_buffer error);
    /* since 1.1: the answer to control_request(request_id): HTTP status and JSON body. */
    void (*on_reply)(void *state, uint64_t request_id, int32_t http_status, const char *json, size_t length);
    /* since 1.1: one hub event (a JSON object), after events_subscribe. May be NULL. */
    void (*on_event)(void *state, const char *json, size_t length);
    /* since 1.1: stop and free state; requests still pending get no reply. */
    void (*stop)(void *state);
} castline_bridge_vtable;

/* One feature of a plugin. (since 1.0) */
typedef struct castline_feature {
    uint32_t kind;            /* since 1.0: castline_feature_kind */
    int32_t rank;             /* since 1.0: higher wins when two features share an id */
    const char *id;           /* since 1.0: stable id, e.g. "avahi", "journald", "json" */
    const void *vtable;       /* since 1.0: the vtable of `kind` */
    void *feature_userdata;   /* since 1.0: passed back to open/start/probe */
} castline_feature;

/* What the entry symbol returns. Static: the host never frees it. */
typedef struct castline_plugin_descriptor {
    uint32_t abi_major;   /* since 1.0: CASTLINE_PLUGIN_ABI_MAJOR */
    uint32_t abi_minor;   /* since 1.0: CASTLINE_PLUGIN_ABI_MINOR the plugin was built with */
    uint32_t struct_size; /* since 1.0: sizeof(castline_plugin_descriptor) when built */
    uint32_t feature_struct_size; /* since 1.0: sizeof(castline_feature) when built (the array stride) */
    const char *id;          /* since 1.0: unique plugin id, [a-z0-9._-]+ */
    const char *version;     /* since 1.0: the plugin's own version */
    const char *description; /* since 1.0 */
    const char *license;     /* since 1.0: SPDX identifier */
    /* since 1.0: called once after the checks, before any feature is used. config_json is the
     * plugin's config object. Non-zero return disables the plugin; the text in error is shown.
     * May be NULL. ctx stays valid for the process lifetime. */
    int32_t (*init)(const castline_host_services *host, castline_host_ctx *ctx, const char *config_json,
                    castline_error_buffer error);
    /* since 1.0: called once at host shutdown, after every feature instance closed. May be NULL. */
    void (*deinit)(void);
    const castline_feature *features; /* since 1.0 */
    size_t feature_count;             /* since 1.0 */
} castline_plugin_descriptor;

/* The type of the entry symbol. */
typedef const castline_plugin_descriptor *(*castline_plugin_describe_fn)(void);

/* The 1.0 sizes: the smallest struct_size the host accepts from a plugin (and the smallest
 * host_services struct_size a plugin may see). Frozen literals: a later minor appends fields and
 * grows sizeof, never these. (since 1.0) */
#define CASTLINE_PLUGIN_DESCRIPTOR_SIZE_1_0 80u
#define CASTLINE_FEATURE_SIZE_1_0 32u
#define CASTLINE_HOST_SERVICES_SIZE_1_0 80u
#define CASTLINE_DISCOVERY_VTABLE_SIZE_1_0 32u
#define CASTLINE_CHANNEL_VTABLE_SIZE_1_0 48u
#define CASTLINE_MEDIA_FORMAT_VTABLE_SIZE_1_0 24u
#define CASTLINE_LOG_SINK_VTABLE_SIZE_1_0 56u
#define CASTLINE_LOG_RECORD_SIZE_1_0 96u
#define CASTLINE_FIELD_SIZE_1_0 56u
#define CASTLINE_ERROR_BUFFER_SIZE_1_0 16u
/* The 1.1 sizes: the host table with the bridge services, the bridge vtable. (since 1.1) */
#define CASTLINE_HOST_SERVICES_SIZE_1_1 96u
#define CASTLINE_BRIDGE_VTABLE_SIZE_1_1 40u
/* The 1.2 size: the channel vtable with on_app_event. (since 1.2) */
#define CASTLINE_CHANNEL_VTABLE_SIZE_1_2 56u

/* 1 when a channel vtable has on_app_event (it was built with 1.2 or later). */
#define CASTLINE_CHANNEL_HAS_APP_EVENTS(vtable) \
    ((vtable)->struct_size >= offsetof(castline_channel_vtable, on_app_event) + sizeof((vtable)->on_app_event))

/* 1 when the host's table has `field` (it was built with a minor that has it), else 0. */
#define CASTLINE_HOST_HAS(host, field) \
    ((host)->struct_size >= offsetof(castline_host_services, field) + sizeof((host)->field))

/* Number of elements of a static feature array. */
#define CASTLINE_FEATURE_COUNT(array) (sizeof(array) / sizeof((array)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define CASTLINE_PLUGIN_VISIBLE __attribute__((visibility("default"), used))
#else
#define CASTLINE_PLUGIN_VISIBLE
#endif
#ifdef __cplusplus
#define CASTLINE_PLUGIN_EXTERN_C extern "C"
#else
#define CASTLINE_PLUGIN_EXTERN_C
#endif

/* Exports `descriptor` (a castline_plugin_descriptor with static storage) under the entry symbol,
 * visible even when the plugin is built with -fvisibility=hidden. One per plugin. Use it when the
 * descriptor is written out by hand; CASTLINE_PLUGIN_DEFINE writes both. (since 1.0) */
#define CASTLINE_PLUGIN_EXPORT(descriptor) \
    CASTLINE_PLUGIN_EXTERN_C CASTLINE_PLUGIN_VISIBLE const castline_plugin_descriptor *castline_plugin_v1_describe(void); \
    CASTLINE_PLUGIN_EXTERN_C CASTLINE_PLUGIN_VISIBLE const castline_plugin_descriptor *castline_plugin_v1_describe(void) { \
        return &(descriptor); \
    }

/* Defines the plugin's descriptor (ABI version and struct sizes filled in) and exports it, like
 * GST_PLUGIN_DEFINE: the whole entry point of a plugin in one line. init and deinit may be NULL;
 * features may be NULL with feature_count 0. (since 1.0)
 *
 *   static const castline_feature features[] = {{CASTLINE_FEATURE_CHANNEL, 0, "my-channel", &vtable, NULL}};
 *   CASTLINE_PLUGIN_DEFINE("my-plugin", "1.0.0", "what it does", "Apache-2.0", my_init, NULL,
 *                          features, CASTLINE_FEATURE_COUNT(features))
 */
#define CASTLINE_PLUGIN_DEFINE(id, version, description, license, init, deinit, features, feature_count) \
    static const castline_plugin_descriptor castline_plugin_descriptor_ = { \
        CASTLINE_PLUGIN_ABI_MAJOR, CASTLINE_PLUGIN_ABI_MINOR, \
        (uint32_t)sizeof(castline_plugin_descriptor), (uint32_t)sizeof(castline_feature), \
        (id), (version), (description), (license), (init), (deinit), (features), (feature_count)}; \
    CASTLINE_PLUGIN_EXPORT(castline_plugin_descriptor_)

/* The 1.0 layout, pinned: sizes and the offsets a later minor must never move. */
#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))
#ifdef __cplusplus
#define CASTLINE_STATIC_ASSERT(condition, message) static_assert(condition, message)
#else
#define CASTLINE_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#endif
#define CASTLINE_PIN_SIZE(type, size) CASTLINE_STATIC_ASSERT(sizeof(type) >= (size), #type " shrank below its 1.0 size")
#define CASTLINE_PIN(type, field, offset) CASTLINE_STATIC_ASSERT(offsetof(type, field) == (offset), #type "." #field " moved")
CASTLINE_STATIC_ASSERT(sizeof(castline_log_record) == CASTLINE_LOG_RECORD_SIZE_1_0, "castline_log_record is frozen");
CASTLINE_STATIC_ASSERT(sizeof(castline_field) == CASTLINE_FIELD_SIZE_1_0, "castline_field is frozen");
CASTLINE_PIN_SIZE(castline_plugin_descriptor, CASTLINE_PLUGIN_DESCRIPTOR_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_feature, CASTLINE_FEATURE_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_host_services, CASTLINE_HOST_SERVICES_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_discovery_vtable, CASTLINE_DISCOVERY_VTABLE_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_channel_vtable, CASTLINE_CHANNEL_VTABLE_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_media_format_vtable, CASTLINE_MEDIA_FORMAT_VTABLE_SIZE_1_0);
CASTLINE_PIN_SIZE(castline_log_sink_vtable, CASTLINE_LOG_SINK_VTABLE_SIZE_1_0);
CASTLINE_STATIC_ASSERT(sizeof(castline_error_buffer) == CASTLINE_ERROR_BUFFER_SIZE_1_0, "castline_error_buffer is passed by value");
CASTLINE_PIN(castline_plugin_descriptor, abi_major, 0);
CASTLINE_PIN(castline_plugin_descriptor, abi_minor, 4);
CASTLINE_PIN(castline_plugin_descriptor, struct_size, 8);
CASTLINE_PIN(castline_plugin_descriptor, feature_struct_size, 12);
CASTLINE_PIN(castline_plugin_descriptor, id, 16);
CASTLINE_PIN(castline_plugin_descriptor, license, 40);
CASTLINE_PIN(castline_plugin_descriptor, init, 48);
CASTLINE_PIN(castline_plugin_descriptor, deinit, 56);
CASTLINE_PIN(castline_plugin_descriptor, features, 64);
CASTLINE_PIN(castline_plugin_descriptor, feature_count, 72);
CASTLINE_PIN(castline_feature, kind, 0);
CASTLINE_PIN(castline_feature, rank, 4);
CASTLINE_PIN(castline_feature, id, 8);
CASTLINE_PIN(castline_feature, vtable, 16);
CASTLINE_PIN(castline_feature, feature_userdata, 24);
CASTLINE_PIN(castline_host_services, version, 0);
CASTLINE_PIN(castline_host_services, struct_size, 4);
CASTLINE_PIN(castline_host_services, log, 8);
CASTLINE_PIN(castline_host_services, level_enabled, 16);
CASTLINE_PIN(castline_host_services, send_message, 24);
CASTLINE_PIN(castline_host_services, complete_command, 32);
CASTLINE_PIN(castline_host_services, timer_start, 40);
CASTLINE_PIN(castline_host_services, timer_cancel, 48);
CASTLINE_PIN(castline_host_services, device_found, 56);
CASTLINE_PIN(castline_host_services, device_lost, 64);
CASTLINE_PIN(castline_host_services, discovery_problem, 72);
CASTLINE_PIN_SIZE(castline_host_services, CASTLINE_HOST_SERVICES_SIZE_1_1);
CASTLINE_PIN_SIZE(castline_bridge_vtable, CASTLINE_BRIDGE_VTABLE_SIZE_1_1);
CASTLINE_PIN(castline_host_services, control_request, 80);
CASTLINE_PIN(castline_host_services, events_subscribe, 88);
CASTLINE_PIN(castline_bridge_vtable, start, 8);
CASTLINE_PIN(castline_bridge_vtable, on_reply, 16);
CASTLINE_PIN(castline_bridge_vtable, on_event, 24);
CASTLINE_PIN(castline_bridge_vtable, stop, 32);
CASTLINE_PIN(castline_discovery_vtable, service_types, 8);
CASTLINE_PIN(castline_discovery_vtable, start, 16);
CASTLINE_PIN(castline_discovery_vtable, stop, 24);
CASTLINE_PIN(castline_channel_vtable, namespaces, 8);
CASTLINE_PIN(castline_channel_vtable, open, 16);
CASTLINE_PIN(castline_channel_vtable, on_message, 24);
CASTLINE_PIN(castline_channel_vtable, command, 32);
CASTLINE_PIN(castline_channel_vtable, close, 40);
CASTLINE_PIN_SIZE(castline_channel_vtable, CASTLINE_CHANNEL_VTABLE_SIZE_1_2);
CASTLINE_PIN(castline_channel_vtable, on_app_event, 48);
CASTLINE_PIN(castline_media_format_vtable, content_types, 8);
CASTLINE_PIN(castline_media_format_vtable, probe, 16);
CASTLINE_PIN(castline_log_sink_vtable, open, 8);
CASTLINE_PIN(castline_log_sink_vtable, write, 16);
CASTLINE_PIN(castline_log_sink_vtable, flush, 24);
CASTLINE_PIN(castline_log_sink_vtable, close, 32);
CASTLINE_PIN(castline_log_sink_vtable, dropped, 40);
CASTLINE_PIN(castline_log_sink_vtable, problem, 48);
CASTLINE_PIN(castline_log_record, level, 8);
CASTLINE_PIN(castline_log_record, line, 12);
CASTLINE_PIN(castline_log_record, class_name, 16);
CASTLINE_PIN(castline_log_record, message, 32);
CASTLINE_PIN(castline_log_record, file, 48);
CASTLINE_PIN(castline_log_record, function, 64);
CASTLINE_PIN(castline_log_record, fields, 80);
CASTLINE_PIN(castline_log_record, field_count, 88);
CASTLINE_PIN(castline_field, key_length, 8);
CASTLINE_PIN(castline_field, value_type, 16);
CASTLINE_PIN(castline_field, string, 24);
CASTLINE_PIN(castline_field, string_length, 32);
CASTLINE_PIN(castline_field, int_value, 40);
CASTLINE_PIN(castline_field, double_value, 48);
#undef CASTLINE_PIN
#undef CASTLINE_PIN_SIZE
#endif

#ifdef __cplusplus
}
#endif
#endif /* CASTLINE_PLUGIN_H */
