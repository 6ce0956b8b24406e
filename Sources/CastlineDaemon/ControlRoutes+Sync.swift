import CastCore

/// The route table's rows for video walls (docs/sync.md).
extension ControlRoute {
    static let httpPattern = #"type: string, pattern: "^https?://[^ ]{3,}$""#

    static let sync = ControlRoute(
        .sync, .POST, "/v1/sync", name: "sync", operationID: "startWall",
        summary: "Start the same media on many TVs at one instant, and keep them together (a video wall).",
        description: """
            Loads the media paused on every device named, measures each one's delay on its warm session,
            and sends each its PLAY so that all start at one wall-clock instant; answers with that instant
            (`startAtUnixNs`) and each device's measured delay and start latency. The daemon then holds the
            TVs to one timeline (rate nudges, seeks), brings back a TV that drops or reboots at the wall's
            position, and plays a playlist in step. A wall with the same name, or on the same devices,
            replaces the one before. With `calibrate`, that many starts are made and measured to learn each
            TV's start latency (kept across restarts), and the answer lists what was learned.
            """,
        body: .object(RouteObject([
            RouteField("devices", #"oneOf: [{type: string, example: "Wall*"}, {type: array, items: {type: string}, minItems: 1}]"#, required: true,
                       "A glob, or a list of device names, ids or aliases."),
            RouteField("media", "oneOf: [{\(httpPattern)}, {type: array, items: {\(httpPattern)}, minItems: 1, maxItems: 50}]", required: true,
                       "An http(s) URL, or a playlist of them."),
            RouteField("content_type", "type: string, example: video/mp4"),
            RouteField("title", "type: string"),
            RouteField("start", "type: number, minimum: 0, maximum: 31622400", "Seconds into the first item."),
            .boolean("repeat", "Play the playlist again after its last item."),
            RouteField("name", "type: string, minLength: 1, maxLength: 64", "The wall's name (default: the devices)."),
            RouteField("calibrate", "type: integer, minimum: 1, maximum: 20", "Make this many measured starts to learn each TV's start latency."),
        ], required: true, schema: "SyncRequest")),
        responses: [("200", "SyncResult")]
    ) { r throws(ControlError) in .command(.sync(try SyncArguments(json: r.json()))) }

    static let listWalls = ControlRoute(
        .listWalls, .GET, "/v1/sync", name: "walls", operationID: "listWalls",
        summary: "The video walls: each one's position, and each TV's phase, last measured error and corrections.",
        responses: [("200", "Walls")]) { _ throws(ControlError) in .command(.listWalls) }

    static let stopWall = ControlRoute(
        .stopWall, .DELETE, "/v1/sync/{wall}", name: "wall stop", operationID: "stopWall",
        summary: "Stop keeping a wall together; what its TVs play is left playing.",
        responses: [("200", "Walls")]) { r throws(ControlError) in .command(.stopWall(r["wall"])) }
}
