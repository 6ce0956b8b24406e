extension MediaMessage {
    public var json: JSONValue {
        switch self {
        case .load(let request): return request.json
        case .seek(let request): return request.json
        case .queueLoad(let request): return request.json
        case .queueInsert(let request): return request.json
        case .queueUpdate(let request): return request.json
        case .queueRemove(let request): return request.json
        case .queueReorder(let request): return request.json
        case .play(let requestID, let mediaSessionID), .pause(let requestID, let mediaSessionID),
             .stop(let requestID, let mediaSessionID), .getStatus(let requestID, let mediaSessionID):
            var object = JSONObject.message(typeName, requestID: requestID)
            object.put("mediaSessionId", mediaSessionID)
            return .object(object)
        case .setVolume(let requestID, let mediaSessionID, let volume):
            var object = JSONObject.message("SET_VOLUME", requestID: requestID)
            object.put("mediaSessionId", mediaSessionID)
            object.put("volume", volume)
            return .object(object)
        case .setPlaybackRate(let requestID, let mediaSessionID, let playbackRate):
            var object = JSONObject.message("SET_PLAYBACK_RATE", requestID: requestID)
            object.put("mediaSessionId", mediaSessionID)
            object.put("playbackRate", playbackRate)
            return .object(object)
        case .editTracksInfo(let requestID, let mediaSessionID, let activeTrackIDs):
            var object = JSONObject.message("EDIT_TRACKS_INFO", requestID: requestID)
            object.put("mediaSessionId", mediaSessionID)
            object.put("activeTrackIds", activeTrackIDs)
            return .object(object)
        case .mediaStatus(let requestID, let status):
            var object = JSONObject.message("MEDIA_STATUS", requestID: requestID)
            object.put("status", status)
            return .object(object)
        case .loadFailed(let requestID, let itemID, let detailedErrorCode):
            var object = JSONObject.message("LOAD_FAILED", requestID: requestID)
            object.put("itemId", itemID)
            object.put("detailedErrorCode", detailedErrorCode)
            return .object(object)
        case .loadCancelled(let requestID, let itemID):
            var object = JSONObject.message("LOAD_CANCELLED", requestID: requestID)
            object.put("itemId", itemID)
            return .object(object)
        case .invalidPlayerState(let requestID):
            return .object(.message("INVALID_PLAYER_STATE", requestID: requestID))
        case .invalidRequest(let requestID, let reason):
            var object = JSONObject.message("INVALID_REQUEST", requestID: requestID)
            object.put("reason", reason)
            return .object(object)
        case .error(let members):
            return members.withType("ERROR")
        case .unknown(_, let json):
            return json
        }
    }

    /// The wire `type`.
    public var typeName: String {
        switch self {
        case .load: return "LOAD"
        case .play: return "PLAY"
        case .pause: return "PAUSE"
        case .stop: return "STOP"
        case .getStatus: return "GET_STATUS"
        case .seek: return "SEEK"
        case .setVolume: return "SET_VOLUME"
        case .setPlaybackRate: return "SET_PLAYBACK_RATE"
        case .editTracksInfo: return "EDIT_TRACKS_INFO"
        case .queueLoad: return "QUEUE_LOAD"
        case .queueInsert: return "QUEUE_INSERT"
        case .queueUpdate: return "QUEUE_UPDATE"
        case .queueRemove: return "QUEUE_REMOVE"
        case .queueReorder: return "QUEUE_REORDER"
        case .mediaStatus: return "MEDIA_STATUS"
        case .loadFailed: return "LOAD_FAILED"
        case .loadCancelled: return "LOAD_CANCELLED"
        case .invalidPlayerState: return "INVALID_PLAYER_STATE"
        case .invalidRequest: return "INVALID_REQUEST"
        case .error: return "ERROR"
        case .unknown(let type, _): return type
        }
    }

    /// The `requestId`; nil when absent.
    public var requestID: RequestID? {
        switch self {
        case .load(let request): return request.requestID
        case .seek(let request): return request.requestID
        case .queueLoad(let request): return request.requestID
        case .queueInsert(let request): return request.requestID
        case .queueUpdate(let request): return request.requestID
        case .queueRemove(let request): return request.requestID
        case .queueReorder(let request): return request.requestID
        case .play(let id, _), .pause(let id, _), .stop(let id, _), .getStatus(let id, _),
             .setVolume(let id, _, _), .setPlaybackRate(let id, _, _), .editTracksInfo(let id, _, _):
            return id
        case .mediaStatus(let id, _), .loadFailed(let id, _, _), .loadCancelled(let id, _),
             .invalidPlayerState(let id), .invalidRequest(let id, _):
            return id
        case .error(let members): return members.embeddedRequestID
        case .unknown(_, let json): return json.object?.embeddedRequestID
        }
    }

    /// The `mediaSessionId` the message refers to, when it names exactly one
    /// (MEDIA_STATUS: the first status entry's).
    public var mediaSessionID: Int? {
        switch self {
        case .play(_, let id), .pause(_, let id), .stop(_, let id), .getStatus(_, let id): return id
        case .setVolume(_, let id, _), .setPlaybackRate(_, let id, _), .editTracksInfo(_, let id, _): return id
        case .seek(let request): return request.mediaSessionID
        case .queueLoad(let request): return request.mediaSessionID
        case .queueInsert(let request): return request.mediaSessionID
        case .queueUpdate(let request): return request.mediaSessionID
        case .queueRemove(let request): return request.mediaSessionID
        case .queueReorder(let request): return request.mediaSessionID
        case .mediaStatus(_, let status): return status.first?.mediaSessionID
        default: return nil
        }
    }
}
