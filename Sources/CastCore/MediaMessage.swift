/// A message of the `urn:x-cast:com.google.cast.media` namespace.
///
/// Requests (sender → app transportId) require `requestId`; replies and events carry an optional
/// one (0 = unsolicited broadcast). Commands on an existing session need `mediaSessionId` (from
/// ``MediaStatus``); PLAY/PAUSE/STOP/GET_STATUS tolerate its absence. Unknown `type`s decode as
/// ``unknown(type:json:)`` and re-encode unchanged.
public enum MediaMessage: CastPayloadModel, JSONSourceDecodable, Hashable {
    case load(LoadRequest)
    case play(requestID: RequestID, mediaSessionID: Int?)
    case pause(requestID: RequestID, mediaSessionID: Int?)
    case stop(requestID: RequestID, mediaSessionID: Int?)
    case getStatus(requestID: RequestID, mediaSessionID: Int?)
    case seek(SeekRequest)
    /// Stream volume (not the device volume).
    case setVolume(requestID: RequestID, mediaSessionID: Int, volume: Volume)
    case setPlaybackRate(requestID: RequestID, mediaSessionID: Int, playbackRate: Double)
    case editTracksInfo(requestID: RequestID, mediaSessionID: Int, activeTrackIDs: [Int]?)
    case queueLoad(QueueLoadRequest)
    case queueInsert(QueueInsertRequest)
    case queueUpdate(QueueUpdateRequest)
    case queueRemove(QueueRemoveRequest)
    case queueReorder(QueueReorderRequest)
    /// `status` may be empty (no media session); a missing `status` decodes as empty.
    case mediaStatus(requestID: RequestID?, status: [MediaStatus])
    case loadFailed(requestID: RequestID?, itemID: Int?, detailedErrorCode: DetailedErrorCode?)
    case loadCancelled(requestID: RequestID?, itemID: Int?)
    case invalidPlayerState(requestID: RequestID?)
    case invalidRequest(requestID: RequestID?, reason: ErrorReason?)
    /// CAF `ERROR`: every member except `type` (requestId, detailedErrorCode, reason, …), as sent.
    case error(JSONObject)
    case unknown(type: String, json: JSONValue)

    public init(json: JSONValue) throws(CastPayloadError) {
        try self.init(source: json)
    }

    init<Source: JSONDecodingSource>(source: Source) throws(CastPayloadError) {
        let object = try source.modelObject()
        let type = JSONStringKey(try object.member("type")?.decodeString("type") ?? "")
        switch type {
        case "MEDIA_STATUS":  // first: most messages a sender reads are this one
            let requestID = try object.member("requestId")?.decodeRequestID()
            let status: [MediaStatus]? = try object.member("status")?.decodeModels("status")
            self = .mediaStatus(requestID: requestID, status: status ?? [])
        case "LOAD": self = .load(try LoadRequest(json: source.jsonValue))
        case "SEEK": self = .seek(try SeekRequest(json: source.jsonValue))
        case "QUEUE_LOAD": self = .queueLoad(try QueueLoadRequest(json: source.jsonValue))
        case "QUEUE_INSERT": self = .queueInsert(try QueueInsertRequest(json: source.jsonValue))
        case "QUEUE_UPDATE": self = .queueUpdate(try QueueUpdateRequest(json: source.jsonValue))
        case "QUEUE_REMOVE": self = .queueRemove(try QueueRemoveRequest(json: source.jsonValue))
        case "QUEUE_REORDER": self = .queueReorder(try QueueReorderRequest(json: source.jsonValue))
        case "PLAY", "PAUSE", "STOP", "GET_STATUS":
            let requestID = try Self.requiredRequestID(object)
            let mediaSessionID = try object.member("mediaSessionId")?.decodeInt("mediaSessionId")
            switch type {
            case "PLAY": self = .play(requestID: requestID, mediaSessionID: mediaSessionID)
            case "PAUSE": self = .pause(requestID: requestID, mediaSessionID: mediaSessionID)
            case "STOP": self = .stop(requestID: requestID, mediaSessionID: mediaSessionID)
            default: self = .getStatus(requestID: requestID, mediaSessionID: mediaSessionID)
            }
        case "SET_VOLUME":
            let volume: Volume? = try object.member("volume")?.decodeModel("volume")
            self = .setVolume(requestID: try Self.requiredRequestID(object),
                              mediaSessionID: try Self.requiredSessionID(object),
                              volume: try requireKey(volume, "volume"))
        case "SET_PLAYBACK_RATE":
            let rate = try object.member("playbackRate")?.decodeDouble("playbackRate")
            self = .setPlaybackRate(requestID: try Self.requiredRequestID(object),
                                    mediaSessionID: try Self.requiredSessionID(object),
                                    playbackRate: try requireKey(rate, "playbackRate"))
        case "EDIT_TRACKS_INFO":
            self = .editTracksInfo(requestID: try Self.requiredRequestID(object),
                                   mediaSessionID: try Self.requiredSessionID(object),
                                   activeTrackIDs: try object.member("activeTrackIds")?.decodeInts("activeTrackIds"))
        case "LOAD_FAILED":
            self = .loadFailed(requestID: try object.member("requestId")?.decodeRequestID(),
                               itemID: try object.member("itemId")?.decodeInt("itemId"),
                               detailedErrorCode: try object.member("detailedErrorCode")?.decodeIntEnum("detailedErrorCode"))
        case "LOAD_CANCELLED":
            self = .loadCancelled(requestID: try object.member("requestId")?.decodeRequestID(),
                                  itemID: try object.member("itemId")?.decodeInt("itemId"))
        case "INVALID_PLAYER_STATE":
            self = .invalidPlayerState(requestID: try object.member("requestId")?.decodeRequestID())
        case "INVALID_REQUEST":
            self = .invalidRequest(requestID: try object.member("requestId")?.decodeRequestID(),
                                   reason: try object.member("reason")?.decodeEnum("reason"))
        case "ERROR":
            self = .error(try source.jsonValue.modelObject().jsonObject.removingType())
        default:
            self = .unknown(type: type.string, json: source.jsonValue)
        }
    }

    static func requiredRequestID<Object: JSONDecodingObject>(_ object: Object) throws(CastPayloadError) -> RequestID
    where Object.MemberValue: JSONDecodingSource {
        try requireKey(try object.member("requestId")?.decodeRequestID(), "requestId")
    }

    static func requiredSessionID<Object: JSONDecodingObject>(_ object: Object) throws(CastPayloadError) -> Int
    where Object.MemberValue: JSONDecodingSource {
        try requireKey(try object.member("mediaSessionId")?.decodeInt("mediaSessionId"), "mediaSessionId")
    }
}
