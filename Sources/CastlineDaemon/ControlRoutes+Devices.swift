import CastCore

/// The route table's device rows: `POST /v1/devices/{device}/<action>` and the channel route.
/// Body fields are the CLI's option names; their schemas are what the OpenAPI document says.
extension ControlRoute {
    static let mediaPattern = #"type: string, pattern: "^(https?://[^ ]{3,}|/.*)$""#
    static let appPattern = #"type: string, pattern: "^[A-Za-z0-9]{1,32}$""#
    static let repeatModes = #"type: string, enum: ["off", all, single, shuffle]"#

    static let cast = ControlRoute(
        .cast, .POST, "/v1/devices/{device}/cast", name: "cast", operationID: "cast",
        summary: "Cast a URL or a file the daemon can read; answers once the device plays (or fails).",
        description: """
            Launches (or joins) the receiver app, loads the media and waits until the device reports PLAYING
            (PAUSED with `no_autoplay`). A job on the device yields to this cast and takes the device back when
            it ends. A local file must lie in `media.roots` (403 `path_not_allowed` otherwise) and be media
            (415 `not_media` for text, keys and unknown types); it is served by the daemon on the address
            that faces the device, to that device alone, under a token that never leaves castline: the
            answer's `served` names the file.
            An http(s) URL that is a web page (`text/html`, from `content_type`, the media-formats plugin or
            the server), with no `app`, is shown with DashCast as the site route shows it; the answer is then
            a SiteResult whose `routed` says so.
            """,
        body: .object(RouteObject([
            RouteField("media", mediaPattern + #", example: "http://media.invalid/a.mp4""#, required: true,
                       "An http(s) URL or an absolute path the daemon can read."),
            RouteField("title", "type: string"), RouteField("subtitle", "type: string"), RouteField("studio", "type: string"),
            RouteField("image", "type: string"),
            RouteField("content_type", "type: string, example: video/mp4"),
            RouteField("stream_type", "type: string, enum: [buffered, live, none]"),
            RouteField("app", appPattern),
            RouteField("start", "type: number, minimum: 0, maximum: 31622400", "Seconds into the media."),
            .boolean("no_autoplay", "Load paused; the answer comes at PAUSED."),
            RouteField("play_timeout", "type: number, minimum: 1, maximum: 3600", "Seconds to wait for PLAYING (default 30)."),
            RouteField("queue", "type: array, items: {\(mediaPattern)}", "Items that play after media, as one queue (at most 50 in all)."),
            RouteField("repeat", repeatModes, "A queue's repeat mode."),
            .boolean("dry_run", "Only say what would be loaded and how (play as is, remux, transcode, refuse); nothing reaches the device."),
            RouteField("subtitles", #"type: string, pattern: "^(auto|/.*)$""#,
                       "A subtitle file (SRT, ASS/SSA, WebVTT) the daemon can read, or auto (next to the file, else embedded)."),
        ], required: true, schema: "CastRequest")),
        responses: [("200", "CastResult")]
    ) { r throws(ControlError) in .command(.cast(r["device"], try CastArguments(json: r.json()))) }

    static let site = ControlRoute(
        .site, .POST, "/v1/devices/{device}/site", name: "site", operationID: "site",
        summary: "Show a web page (DashCast) or a Home Assistant dashboard (Home Assistant Cast) on the device.",
        description: """
            A page is checked first (unless `preflight` is false): one that cannot be fetched, or answers an
            HTTP error, fails with 422 (`site_unreachable`, `site_http_error`) before anything is launched; one that refuses frames (X-Frame-Options,
            CSP frame-ancestors) or is http (mixed content inside DashCast's https receiver) is sent with
            `force` unless `force` is false, and `notes` say why. The web-pages channel plugin must be loaded
            (503 `site_plugin_missing` otherwise). A dashboard needs the plugin's `home_assistant` config;
            Home Assistant Cast's `receiver_error` is a 422 with its meaning.
            """,
        body: .object(RouteObject([
            RouteField("url", #"type: string, pattern: "^https?://[^ ]{3,}$", example: "http://127.0.0.1:1/dash.html""#),
            .boolean("force", "Navigate the receiver to the page instead of framing it (default: the pre-flight decides)."),
            RouteField("reload_every", "type: number, minimum: 0, maximum: 86400", "Seconds between reloads (0 never; not with force)."),
            .boolean("preflight", "Check the page first (default true)."),
            RouteField("home_assistant", "type: object", fields: [RouteField("view_path", "type: string"), RouteField("url_path", "type: string")]),
        ], required: true, schema: "SiteRequest",
           description: "A page (`url`) through DashCast, or (`home_assistant`) a view of the Home Assistant the web-pages plugin is configured for.",
           oneOfRequired: [["url"], ["home_assistant"]])),
        responses: [("200", "SiteResult")]
    ) { r throws(ControlError) in .command(.site(r["device"], try SiteArguments(json: r.json()))) }

    static let announce = ControlRoute(
        .announce, .POST, "/v1/devices/{device}/announce", name: "announce", operationID: "announce",
        summary: "Play an announcement, then bring back what was playing.",
        description: """
            Takes a snapshot (app, media with metadata and tracks, position, active tracks, queue and repeat
            mode, pause, volume and mute), plays `media` in the default receiver at `volume` until it finishes
            (or `timeout` seconds), then restores the snapshot; an idle device is left idle. Answers when the
            device is restored (`restored`: true, "partly" or false with `reason`; the volume always comes back),
            or with `"wait": false` once the announcement is under way (`announcing`: true).
            """,
        body: .object(RouteObject([
            RouteField("media", mediaPattern + #", example: "http://media.invalid/chime.mp3""#, required: true),
            RouteField("volume", "type: integer, minimum: 0, maximum: 100", "The device volume during the announcement (percent)."),
            RouteField("content_type", "type: string, example: audio/mpeg"),
            RouteField("timeout", "type: number, minimum: 1, maximum: 3600", "Seconds the announcement may play (default 120)."),
            .boolean("wait", "Answer once restored (default true)."),
        ], required: true, schema: "AnnounceRequest")),
        responses: [("200", "AnnounceResult")]
    ) { r throws(ControlError) in .command(.announce(r["device"], try AnnounceArguments(json: r.json()))) }

    static let play = bodiless(.play, summary: "Resume playback of whatever app runs.") { .play($0) }
    static let pause = bodiless(.pause, summary: "Pause playback.") { .pause($0) }

    /// A device action that takes no body (an empty object at most) and answers with the device.
    static func bodiless(_ action: ControlAction, summary: String, _ command: @escaping @Sendable (String) -> ControlCommand) -> ControlRoute {
        ControlRoute(action, .POST, "/v1/devices/{device}/\(action.rawValue)", name: action.rawValue, operationID: action.rawValue,
                     summary: summary, body: .document(schema: "Empty", required: false), responses: [("200", "Device")]) { r throws(ControlError) in
            _ = try r.arguments()
            return .command(command(r["device"]))
        }
    }

    static let stop = ControlRoute(
        .stop, .POST, "/v1/devices/{device}/stop", name: "stop", operationID: "stop",
        summary: "Stop the media, or with `app` the receiver app.",
        body: .object(RouteObject([.boolean("app", "Stop the receiver app, ending the cast, not only the media.")], required: false)),
        responses: [("200", "Device")]
    ) { r throws(ControlError) in .command(.stop(r["device"], app: try r.arguments().bool("app") ?? false)) }

    static let seek = ControlRoute(
        .seek, .POST, "/v1/devices/{device}/seek", name: "seek", operationID: "seek",
        summary: #"Seek to a position (90, "1:30", "1:02:03") or by an offset ("+30", "-10")."#,
        body: .object(RouteObject([
            RouteField("position", """
                oneOf: [{type: number, minimum: 0, maximum: 31622400}, \
                {type: string, pattern: "^[+-]?([0-9]{1,7}|[0-9]{1,3}:[0-5][0-9]|[0-9]{1,3}:[0-5][0-9]:[0-5][0-9])$", example: "1:30"}]
                """, required: true, "Seconds, [h:]mm:ss, or an offset (+30, -10)."),
        ], required: true)),
        responses: [("200", "Device")]
    ) { r throws(ControlError) in .command(.seek(r["device"], try ControlArguments.seek(r.arguments().value("position")))) }

    static let volume = ControlRoute(
        .volume, .POST, "/v1/devices/{device}/volume", name: "volume", operationID: "volume",
        summary: #"Set the volume in whole percent, or change it ("+10", "-10"); the device's works on an idle device."#,
        body: .object(RouteObject([
            RouteField("level", """
                oneOf: [{type: integer, minimum: 0, maximum: 100}, \
                {type: string, pattern: "^([0-9]|[1-9][0-9]|100|[+-]([1-9]|[1-9][0-9]|100))$", example: "+10"}]
                """, required: true, "A whole percent 0-100, or a change by percent points."),
            .boolean("stream", "The media stream's volume instead of the device's."),
        ], required: true)),
        responses: [("200", "Device")]
    ) { r throws(ControlError) in
        let args = try r.arguments()
        return .command(.volume(r["device"], try ControlArguments.volume(args.value("level")), stream: try args.bool("stream") ?? false))
    }

    static let mute = ControlRoute(
        .mute, .POST, "/v1/devices/{device}/mute", name: "mute", operationID: "mute",
        summary: #"Mute (or with `"muted": false` or `"off": true` unmute) the device or the stream."#,
        body: .object(RouteObject([
            .boolean("muted", "Mute (default true) or unmute."), .boolean("off", "Unmute."),
            .boolean("stream", "The media stream instead of the device."),
        ], required: false)),
        responses: [("200", "Device")]
    ) { r throws(ControlError) in
        let args = try r.arguments()
        var muted = try args.bool("muted") ?? true
        if try args.bool("off") == true { muted = false }
        return .command(.mute(r["device"], muted, stream: try args.bool("stream") ?? false))
    }

    static let queue = ControlRoute(
        .queue, .POST, "/v1/devices/{device}/queue", name: "queue", operationID: "queue", summary: "Queue control.",
        body: .object(RouteObject(variants: [
            [RouteField("action", "type: string, enum: [next, prev, previous]", required: true)],
            [RouteField("action", "type: string, enum: [jump]", required: true),
             RouteField("items", "type: array, minItems: 1, maxItems: 1, items: {type: integer, minimum: -2147483648, maximum: 2147483647}",
                        required: true, "The item id to play.")],
            [RouteField("action", "type: string, enum: [remove]", required: true),
             RouteField("items", "type: array, minItems: 1, items: {type: integer, minimum: -2147483648, maximum: 2147483647}",
                        required: true, "The item ids to remove.")],
            [RouteField("action", "type: string, enum: [repeat]", required: true), RouteField("mode", repeatModes, required: true)],
        ], required: true)),
        responses: [("200", "Device")]
    ) { r throws(ControlError) in
        let args = try r.arguments()
        guard let name = try args.string("action") else {
            throw ControlError.usage("bad_queue", "queue needs \"action\": next, prev, jump, remove or repeat")
        }
        var values = try args.strings("items") ?? []
        if let mode = try args.string("mode") { values = [mode] }
        return .command(.queue(r["device"], try ControlArguments.queue(action: name, values: values)))
    }

    static let channel = ControlRoute(
        .channel, .POST, "/v1/devices/{device}/channels/{namespace}", name: "channel", operationID: "channel",
        summary: "A message to a custom namespace, or with `wait` a request that waits for its reply.",
        description: """
            It goes through the channel plugin that declares the namespace (its answer is the reply), or a
            plain channel when `channels.allowed_namespaces` lists it (a request gets a `requestId`; the
            reply is the message with the same id). Any other namespace is refused (403).
            """,
        body: .object(RouteObject([
            RouteField("message", "oneOf: [{type: object}, {type: string}]", "Required unless listen is true."),
            .boolean("wait", "A request: wait for its reply."),
            RouteField("app", appPattern, "Launch this receiver app first when it does not run."),
            RouteField("timeout", "type: number, minimum: 0, exclusiveMinimum: true, maximum: 300", "Seconds to wait for the reply (default 10)."),
            .boolean("listen", "With no message: open the namespace so the app's messages become channel events."),
        ], required: true)),
        responses: [("200", "ChannelResult")]
    ) { r throws(ControlError) in .command(.channel(r["device"], namespace: r["namespace"], try ChannelArguments(json: r.json()))) }
}
