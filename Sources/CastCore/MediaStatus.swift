/// One entry of MEDIA_STATUS `status[]`: the state of a media session.
///
/// `mediaSessionId` and `playerState` are required. Missing `currentTime`, `playbackRate` and
/// `supportedMediaCommands` decode as 0, 1 and `[]`; integers are accepted for the doubles.
/// `media` may be absent (Spotify): use ``effectiveMedia``. Right after a LOAD the top-level state
/// is `IDLE` without `idleReason` while `extendedStatus` says `LOADING`: use ``isLoading`` before
/// treating IDLE as finished. Unknown keys are ignored; free-form members stay JSON.
public struct MediaStatus: CastPayloadModel, JSONSourceDecodable, Hashable {
    public var mediaSessionID: Int
    public var playerState: PlayerState
    /// Only when `playerState` is IDLE.
    public var idleReason: IdleReason?
    /// Seconds.
    public var currentTime: Double
    public var playbackRate: Double
    public var supportedMediaCommands: SupportedMediaCommands
    /// Stream volume (not the device volume).
    public var volume: Volume?
    public var media: MediaInformation? {
        get { _media?.value }
        set { _media = newValue.map(IndirectBox.init) }
    }
    private var _media: IndirectBox<MediaInformation>?
    public var extendedStatus: ExtendedMediaStatus? {
        get { _extendedStatus?.value }
        set { _extendedStatus = newValue.map(IndirectBox.init) }
    }
    private var _extendedStatus: IndirectBox<ExtendedMediaStatus>?
    public var currentItemID: Int?
    public var loadingItemID: Int?
    public var preloadedItemID: Int?
    public var repeatMode: RepeatMode?
    public var items: [QueueItem]?
    /// `{queueType, startIndex, items, …}` as sent.
    public var queueData: JSONValue?
    public var activeTrackIDs: [Int]?
    public var videoInfo: VideoInfo? {
        get { _videoInfo?.value }
        set { _videoInfo = newValue.map(IndirectBox.init) }
    }
    private var _videoInfo: IndirectBox<VideoInfo>?
    public var customData: JSONValue?
    public var breakStatus: JSONValue?
    public var liveSeekableRange: JSONValue?
}

// The initializers live in an extension so the struct keeps its synthesized memberwise
// initializer: decoding ends in one call to it, which the optimizer builds in place. Assigning the
// stored properties one by one in an initializer made it copy the finished value on return (a
// retain and a release per reference).
extension MediaStatus {
    public init(
        mediaSessionID: Int, playerState: PlayerState, idleReason: IdleReason? = nil, currentTime: Double = 0,
        playbackRate: Double = 1, supportedMediaCommands: SupportedMediaCommands = [], volume: Volume? = nil,
        media: MediaInformation? = nil, extendedStatus: ExtendedMediaStatus? = nil
    ) {
        self.mediaSessionID = mediaSessionID
        self.playerState = playerState
        self.idleReason = idleReason
        self.currentTime = currentTime
        self.playbackRate = playbackRate
        self.supportedMediaCommands = supportedMediaCommands
        self.volume = volume
        self._media = media.map(IndirectBox.init)
        self._extendedStatus = extendedStatus.map(IndirectBox.init)
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        try self.init(source: json)
    }

    /// Decodes into locals, then makes the value with one call to the memberwise initializer (see
    /// the note on this extension): a delegating `self.init(…)` followed by mutations, or stored
    /// properties assigned one by one, make the optimizer copy the whole struct.
    init<Source: JSONDecodingSource>(source json: Source) throws(CastPayloadError) {
        var mediaSessionID: Int?
        var playerState: PlayerState?
        var idleReason: IdleReason?
        var currentTime: Double = 0
        var playbackRate: Double = 1
        var supportedMediaCommands: SupportedMediaCommands = []
        var volume: Volume?
        // Boxed as soon as decoded: a large optional struct carried through the loop gets moved
        // with memcpy on every iteration.
        var media: IndirectBox<MediaInformation>?
        var extendedStatus: IndirectBox<ExtendedMediaStatus>?
        var currentItemID: Int?
        var loadingItemID: Int?
        var preloadedItemID: Int?
        var repeatMode: RepeatMode?
        var items: [QueueItem]?
        var queueData: JSONValue?
        var activeTrackIDs: [Int]?
        var videoInfo: IndirectBox<VideoInfo>?
        var customData: JSONValue?
        var breakStatus: JSONValue?
        var liveSeekableRange: JSONValue?
        for (key, value) in try json.modelObject() {
            switch key {
            case "mediaSessionId": mediaSessionID = try value.decodeInt("mediaSessionId")
            case "playerState": playerState = try value.decodeEnum("playerState")
            case "idleReason": idleReason = try value.decodeEnum("idleReason")
            case "currentTime": currentTime = try value.decodeDouble("currentTime") ?? 0
            case "playbackRate": playbackRate = try value.decodeDouble("playbackRate") ?? 1
            case "supportedMediaCommands":
                let bits = try value.decodeInt("supportedMediaCommands") ?? 0
                supportedMediaCommands = SupportedMediaCommands(rawValue: UInt64(bitPattern: Int64(bits)))
            case "volume": volume = try value.decodeModel("volume")
            case "media": media = try value.decodeModel("media", as: MediaInformation.self).map(IndirectBox.init)
            case "extendedStatus": extendedStatus = try value.decodeModel("extendedStatus", as: ExtendedMediaStatus.self).map(IndirectBox.init)
            case "currentItemId": currentItemID = try value.decodeInt("currentItemId")
            case "loadingItemId": loadingItemID = try value.decodeInt("loadingItemId")
            case "preloadedItemId": preloadedItemID = try value.decodeInt("preloadedItemId")
            case "repeatMode": repeatMode = try value.decodeEnum("repeatMode")
            case "items": items = try value.decodeModels("items")
            case "queueData": queueData = value.decodeAny()
            case "activeTrackIds": activeTrackIDs = try value.decodeInts("activeTrackIds")
            case "videoInfo": videoInfo = try value.decodeModel("videoInfo", as: VideoInfo.self).map(IndirectBox.init)
            case "customData": customData = value.decodeAny()
            case "breakStatus": breakStatus = value.decodeAny()
            case "liveSeekableRange": liveSeekableRange = value.decodeAny()
            default: break
            }
        }
        guard let mediaSessionID else { throw .missingKey("mediaSessionId") }
        guard let playerState = consume playerState else { throw .missingKey("playerState") }
        self.init(
            mediaSessionID: mediaSessionID, playerState: playerState, idleReason: consume idleReason,
            currentTime: currentTime, playbackRate: playbackRate, supportedMediaCommands: supportedMediaCommands,
            volume: consume volume, _media: consume media, _extendedStatus: consume extendedStatus,
            currentItemID: currentItemID, loadingItemID: loadingItemID, preloadedItemID: preloadedItemID,
            repeatMode: consume repeatMode, items: consume items, queueData: consume queueData,
            activeTrackIDs: consume activeTrackIDs, _videoInfo: consume videoInfo, customData: consume customData,
            breakStatus: consume breakStatus, liveSeekableRange: consume liveSeekableRange)
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(8)
        object.put("mediaSessionId", mediaSessionID)
        object.put("playerState", playerState)
        object.put("idleReason", idleReason)
        object.put("currentTime", currentTime)
        object.put("playbackRate", playbackRate)
        object.put("supportedMediaCommands", JSONValue.int(Int64(bitPattern: supportedMediaCommands.rawValue)))
        object.put("volume", volume)
        object.put("media", media)
        object.put("extendedStatus", extendedStatus)
        object.put("currentItemId", currentItemID)
        object.put("loadingItemId", loadingItemID)
        object.put("preloadedItemId", preloadedItemID)
        object.put("repeatMode", repeatMode)
        object.put("items", items)
        object.put("queueData", queueData)
        object.put("activeTrackIds", activeTrackIDs)
        object.put("videoInfo", videoInfo)
        object.put("customData", customData)
        object.put("breakStatus", breakStatus)
        object.put("liveSeekableRange", liveSeekableRange)
        return .object(object)
    }

    /// `media`, or `extendedStatus.media` when the top level has none (pychromecast's fallback).
    public var effectiveMedia: MediaInformation? { media ?? extendedStatus?.media }

    /// `true` while new media is loading: top-level `LOADING`, or top-level `IDLE` without an
    /// `idleReason` while `extendedStatus.playerState` is `LOADING`.
    public var isLoading: Bool {
        if playerState == .loading { return true }
        return playerState == .idle && idleReason == nil && extendedStatus?.playerState == .loading
    }

    /// The state to show: `extendedStatus.playerState` while ``isLoading``, else `playerState`.
    public var effectivePlayerState: PlayerState { isLoading ? .loading : playerState }
}
