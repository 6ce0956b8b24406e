import CastCore

/// What a device is doing, for `list sessions` and tests. Value type; ``json`` for the control
/// socket.
public struct DeviceSnapshot: Sendable, Equatable {
    public struct App: Sendable, Equatable {
        public var appID: String
        public var displayName: String
        public var sessionID: String
        public var transportID: String
        public var isIdleScreen: Bool
        /// What a web app shows (DashCast's URL, Home Assistant's view); nil for other apps.
        public var page: JSONValue?
    }

    /// One virtual connection.
    public struct Sender: Sendable, Equatable {
        public var connection: SenderConnectionID
        public var senderID: String
        /// `receiver-0` or the app's transportId.
        public var endpoint: String
        public var connType: ConnectionType
        public var userAgent: String?
    }

    public struct Media: Sendable, Equatable {
        public var mediaSessionID: Int
        public var playerState: PlayerState
        public var currentTime: Double
        public var playbackRate: Double
        public var contentID: String
        public var contentType: String
        public var title: String?
        public var currentItemID: Int?
        public var itemCount: Int
        public var repeatMode: RepeatMode
        public var activeTrackIDs: [Int]? = nil
    }

    public var uuid: String
    public var friendlyName: String
    public var app: App?
    /// Open TCP connections, in id order.
    public var connections: [SenderConnectionID]
    /// Virtual connections, in opening order.
    public var senders: [Sender]
    public var media: Media?
    /// Where the playhead really is (nil without a media session). Not in ``json``: the server
    /// adds it there with its times on the wall clock.
    public var playback: PlaybackTruth?
    /// Device volume.
    public var volume: Volume
    public var advertisement: DeviceAdvertisementState
    /// Messages dropped without a reply: unknown namespace or destination, no virtual connection.
    public var ignoredMessages: Int
    /// Requests answered with an error (INVALID_REQUEST, LAUNCH_ERROR, INVALID_PLAYER_STATE, LOAD_FAILED).
    public var rejectedMessages: Int
    /// Set by ``ReceiverDevice/failNextLoad(_:)`` and not yet used.
    public var pendingLoadFailure: DetailedErrorCode?
    /// Multizone: `group` (a group endpoint's members), `groups` (memberships), `castingGroups`
    /// (the groups whose media the device plays now).
    public var multizone: JSONValue = .null
    /// What the screen shows (nil: no screen).
    public var screen: ScreenState?
    /// The field profile in force: its name, the idle timeout and what resets it, launches
    /// set to hang, the pending launch's outcome.
    public var field: JSONValue = .null

    public var json: JSONValue {
        var object = JSONObject()
        object.append(key: "uuid", value: .string(uuid))
        object.append(key: "friendlyName", value: .string(friendlyName))
        if let app {
            object.append(key: "app", value: [
                "appId": .string(app.appID), "displayName": .string(app.displayName), "sessionId": .string(app.sessionID),
                "transportId": .string(app.transportID), "isIdleScreen": .bool(app.isIdleScreen),
                "page": app.page ?? .null,
            ])
        } else {
            object.append(key: "app", value: .null)
        }
        object.append(key: "connections", value: .array(connections.map { .int(Int64($0.rawValue)) }))
        object.append(key: "senders", value: .array(senders.map { sender in
            var entry: JSONObject = [
                "connection": .int(Int64(sender.connection.rawValue)), "senderId": .string(sender.senderID),
                "endpoint": .string(sender.endpoint), "connType": .int(Int64(sender.connType.rawValue)),
            ]
            if let agent = sender.userAgent { entry.set("userAgent", .string(agent)) }
            return .object(entry)
        }))
        if let media {
            var entry: JSONObject = [
                "mediaSessionId": .int(Int64(media.mediaSessionID)), "playerState": .string(media.playerState.rawValue),
                "currentTime": .double(media.currentTime), "playbackRate": .double(media.playbackRate),
                "contentId": .string(media.contentID), "contentType": .string(media.contentType),
                "itemCount": .int(Int64(media.itemCount)), "repeatMode": .string(media.repeatMode.rawValue),
            ]
            if let title = media.title { entry.set("title", .string(title)) }
            if let item = media.currentItemID { entry.set("currentItemId", .int(Int64(item))) }
            if let tracks = media.activeTrackIDs { entry.set("activeTrackIds", .array(tracks.map { .int(Int64($0)) })) }
            object.append(key: "media", value: .object(entry))
        } else {
            object.append(key: "media", value: .null)
        }
        object.append(key: "volume", value: ["level": .double(volume.level ?? 1), "muted": .bool(volume.muted ?? false)])
        object.append(key: "advertisement", value: [
            "busy": .bool(advertisement.busy), "statusText": .string(advertisement.statusText),
            "runningAppId": advertisement.runningAppID.map { .string($0) } ?? .null,
        ])
        object.append(key: "ignoredMessages", value: .int(Int64(ignoredMessages)))
        object.append(key: "rejectedMessages", value: .int(Int64(rejectedMessages)))
        object.append(key: "pendingLoadFailure", value: pendingLoadFailure.map { .int(Int64($0.rawValue)) } ?? .null)
        object.append(key: "multizone", value: multizone)
        object.append(key: "screen", value: screen?.json ?? .null)
        object.append(key: "field", value: field)
        return .object(object)
    }
}
