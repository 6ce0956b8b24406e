import CastCore

/// A running app and its media, moved from one device to another (stream transfer). Value type.
public struct TransferredSession: Sendable, Equatable {
    /// The app; the target uses its own catalogue entry with this id when it has one.
    public var app: AppDefinition
    /// The media session; nil when the app plays nothing.
    public var media: TransferredMedia?
    /// The app's sessionId where it ran (kept by a group's leader move, not by a transfer).
    public var sessionID: String?

    public init(app: AppDefinition, media: TransferredMedia?) {
        self.app = app
        self.media = media
    }

    /// Summary for logs and the control socket.
    public var json: JSONValue {
        var object: JSONObject = ["appId": .string(app.appID), "displayName": .string(app.displayName)]
        if let media { object.set("media", media.json) }
        return .object(object)
    }
}

/// The state of a media session at export time. Value type.
public struct TransferredMedia: Sendable, Equatable {
    /// The queue (a single LOAD is a queue of one); every item has an itemId and media.
    public var items: [QueueItem]
    public var currentItemID: Int
    public var currentTime: Double
    /// PLAYING or PAUSED (BUFFERING is exported as the state it was heading for).
    public var playerState: PlayerState
    public var playbackRate: Double
    public var repeatMode: RepeatMode
    /// Loaded with QUEUE_LOAD / grown with QUEUE_INSERT (items reported in MEDIA_STATUS).
    public var isQueue: Bool
    public var activeTrackIDs: [Int]?
    /// Stream volume.
    public var volume: Volume

    public init(
        items: [QueueItem], currentItemID: Int, currentTime: Double, playerState: PlayerState, playbackRate: Double = 1,
        repeatMode: RepeatMode = .off, isQueue: Bool = false, activeTrackIDs: [Int]? = nil,
        volume: Volume = Volume(level: 1, muted: false)
    ) {
        self.items = items
        self.currentItemID = currentItemID
        self.currentTime = currentTime
        self.playerState = playerState
        self.playbackRate = playbackRate
        self.repeatMode = repeatMode
        self.isQueue = isQueue
        self.activeTrackIDs = activeTrackIDs
        self.volume = volume
    }

    /// The current item's media.
    public var media: MediaInformation {
        (items.first { $0.itemID == currentItemID } ?? items.first)?.media ?? MediaInformation(contentID: "", contentType: "")
    }

    public var json: JSONValue {
        [
            "contentId": .string(media.contentID), "contentType": .string(media.contentType),
            "currentItemId": .int(Int64(currentItemID)), "items": .int(Int64(items.count)),
            "currentTime": .double(currentTime), "playerState": .string(playerState.rawValue),
            "playbackRate": .double(playbackRate), "repeatMode": .string(repeatMode.rawValue),
        ]
    }
}
