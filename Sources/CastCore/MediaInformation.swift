/// `media`: what is (to be) played — in LOAD, queue items and MEDIA_STATUS.
///
/// `contentId` is required. A missing `streamType` decodes as `.buffered`; a missing
/// `contentType` as `""` (and is then not re-encoded). Keys this type does not model are kept in
/// ``extra`` and re-encoded, so a receiver can echo what a sender loaded.
public struct MediaInformation: CastPayloadModel, JSONSourceDecodable, Hashable {
    /// URL or app-specific id (may contain non-ASCII text).
    public var contentID: String
    /// CAF: the URL when `contentId` is an app id.
    public var contentURL: String?
    public var streamType: StreamType
    /// MIME type as sent by the sender (devices echo it, e.g. `music`).
    public var contentType: String
    public var metadata: MediaMetadata? {
        get { _metadata?.value }
        set { _metadata = newValue.map(IndirectBox.init) }
    }
    private var _metadata: IndirectBox<MediaMetadata>?
    /// Seconds; absent or 0 for live streams.
    public var duration: Double?
    public var tracks: [MediaTrack]
    public var textTrackStyle: JSONValue?
    public var customData: JSONValue?
    public var mediaCategory: MediaCategory?
    /// CAF deep-link entity.
    public var entity: String?
    /// Members with keys not listed above, in wire order.
    public var extra: JSONObject
}

// The initializers live in an extension so the struct keeps its synthesized memberwise
// initializer: decoding ends in one call to it, which the optimizer builds in place. Assigning the
// stored properties one by one in an initializer made it copy the finished value on return (a
// retain and a release per reference).
extension MediaInformation {
    public init(
        contentID: String, contentURL: String? = nil, streamType: StreamType = .buffered, contentType: String,
        metadata: MediaMetadata? = nil, duration: Double? = nil, tracks: [MediaTrack] = [],
        textTrackStyle: JSONValue? = nil, customData: JSONValue? = nil, mediaCategory: MediaCategory? = nil,
        entity: String? = nil, extra: JSONObject = JSONObject()
    ) {
        self.contentID = contentID
        self.contentURL = contentURL
        self.streamType = streamType
        self.contentType = contentType
        self._metadata = metadata.map(IndirectBox.init)
        self.duration = duration
        self.tracks = tracks
        self.textTrackStyle = textTrackStyle
        self.customData = customData
        self.mediaCategory = mediaCategory
        self.entity = entity
        self.extra = extra
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        try self.init(source: json)
    }

    /// Decodes into locals, then one call to the memberwise initializer (no whole-struct copies,
    /// see `MediaStatus.init(source:)`).
    init<Source: JSONDecodingSource>(source json: Source) throws(CastPayloadError) {
        var contentID: String?
        var contentURL: String?
        var streamType: StreamType?
        var contentType: String?
        var metadata: IndirectBox<MediaMetadata>?
        var duration: Double?
        var tracks: [MediaTrack]?
        var textTrackStyle: JSONValue?
        var customData: JSONValue?
        var mediaCategory: MediaCategory?
        var entity: String?
        var extra = JSONObject()
        for (key, value) in try json.modelObject() {
            switch key {
            case "contentId": contentID = try value.decodeString("contentId")
            case "contentUrl": contentURL = try value.decodeString("contentUrl")
            case "streamType": streamType = try value.decodeEnum("streamType")
            case "contentType": contentType = try value.decodeString("contentType")
            case "metadata": metadata = try value.decodeModel("metadata", as: MediaMetadata.self).map(IndirectBox.init)
            case "duration": duration = try value.decodeDouble("duration")
            case "tracks": tracks = try value.decodeModels("tracks")
            case "textTrackStyle": textTrackStyle = value.decodeAny()
            case "customData": customData = value.decodeAny()
            case "mediaCategory": mediaCategory = try value.decodeEnum("mediaCategory")
            case "entity": entity = try value.decodeString("entity")
            default: extra.append(key: key.string, value: value.jsonValue)
            }
        }
        guard let contentID = consume contentID else { throw .missingKey("contentId") }
        self.init(
            contentID: contentID, contentURL: consume contentURL, streamType: (consume streamType) ?? .buffered,
            contentType: (consume contentType) ?? "", _metadata: consume metadata, duration: duration,
            tracks: (consume tracks) ?? [], textTrackStyle: consume textTrackStyle, customData: consume customData,
            mediaCategory: consume mediaCategory, entity: consume entity, extra: consume extra)
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(6 + extra.count)
        object.put("contentId", contentID)
        object.put("contentUrl", contentURL)
        object.put("streamType", streamType)
        if !contentType.isEmpty { object.put("contentType", contentType) }
        object.put("metadata", metadata)
        object.put("duration", duration)
        if !tracks.isEmpty { object.put("tracks", tracks) }
        object.put("textTrackStyle", textTrackStyle)
        object.put("customData", customData)
        object.put("mediaCategory", mediaCategory)
        object.put("entity", entity)
        for (key, value) in extra { object.append(key: key, value: value) }
        return .object(object)
    }
}
