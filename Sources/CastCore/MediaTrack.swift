/// One entry of `media.tracks[]`: a text, audio or video track.
///
/// `textTrackStyle` lives on ``MediaInformation`` as free-form JSON.
public struct MediaTrack: CastPayloadModel, Hashable {
    public var trackID: Int
    public var type: TrackType
    /// URL of an out-of-band track (e.g. a WebVTT file).
    public var trackContentID: String?
    /// MIME type of `trackContentId` (`text/vtt`).
    public var trackContentType: String?
    /// TEXT tracks only.
    public var subtype: TextTrackType?
    /// RFC 5646 language tag.
    public var language: String?
    public var name: String?
    public var customData: JSONValue?

    public init(
        trackID: Int, type: TrackType, trackContentID: String? = nil, trackContentType: String? = nil,
        subtype: TextTrackType? = nil, language: String? = nil, name: String? = nil, customData: JSONValue? = nil
    ) {
        self.trackID = trackID
        self.type = type
        self.trackContentID = trackContentID
        self.trackContentType = trackContentType
        self.subtype = subtype
        self.language = language
        self.name = name
        self.customData = customData
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var trackID: Int?
        var type: TrackType?
        for (key, value) in try json.modelObject() {
            switch key {
            case "trackId": trackID = try value.decodeInt(key.string)
            case "type": type = try value.decodeEnum(key.string)
            case "trackContentId": trackContentID = try value.decodeString(key.string)
            case "trackContentType": trackContentType = try value.decodeString(key.string)
            case "subtype": subtype = try value.decodeEnum(key.string)
            case "language": language = try value.decodeString(key.string)
            case "name": name = try value.decodeString(key.string)
            case "customData": customData = value.decodeAny()
            default: break
            }
        }
        self.trackID = try requireKey(trackID, "trackId")
        self.type = try requireKey(type, "type")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(8)
        object.put("trackId", trackID)
        object.put("type", type)
        object.put("trackContentId", trackContentID)
        object.put("trackContentType", trackContentType)
        object.put("subtype", subtype)
        object.put("language", language)
        object.put("name", name)
        object.put("customData", customData)
        return .object(object)
    }
}
