// The result of media format analysis and its JSON form. Pure stdlib: no Foundation.

import CastJSON

/// What format analysis found out about a media URL / content type / manifest: the values a
/// Cast sender puts in `MediaInformation` (contentType, streamType) and `VideoInfo` (width,
/// height, hdrType), plus human-readable reasons in `notes`. Nil means "not known".
struct MediaFormatReport: Equatable, Sendable {
    /// Normalised MIME type (`application/x-mpegURL`, `video/mp4`, …).
    var contentType: String?
    /// `LIVE` or `BUFFERED`; nil when unknown (HLS master playlists, plain files).
    var streamType: String?
    var width: Int?
    var height: Int?
    /// Cast `VideoInfo.hdrType`: `sdr`, `hdr` or `dv`.
    var hdrType: String?
    /// Finer: `HDR10`, `HLG`, `DolbyVision` or `SDR`.
    var hdrFormat: String?
    /// Video codec strings of the chosen variant / representation (supplemental Dolby Vision
    /// codecs appended, brands dropped). Audio and text codecs are not listed.
    var videoCodecs: [String]
    /// HLS master playlists: the URI (as written, unresolved) of the chosen (largest) variant,
    /// whose media playlist tells LIVE from BUFFERED. Nil otherwise.
    var variantURI: String?
    /// Human-readable reasons, e.g. `VIDEO-RANGE=PQ on 3840x2160 variant`.
    var notes: [String]
    /// What libavformat read from the container itself (nil for manifests and unreadable input).
    var container: ProbedContainer?

    init(
        contentType: String? = nil, streamType: String? = nil, width: Int? = nil, height: Int? = nil,
        hdrType: String? = nil, hdrFormat: String? = nil, videoCodecs: [String] = [],
        variantURI: String? = nil, notes: [String] = []
    ) {
        self.contentType = contentType
        self.streamType = streamType
        self.width = width
        self.height = height
        self.hdrType = hdrType
        self.hdrFormat = hdrFormat
        self.videoCodecs = videoCodecs
        self.variantURI = variantURI
        self.notes = notes
    }

    /// A compact JSON object with snake_case keys in this order: `content_type`, `stream_type`,
    /// `width`, `height`, `hdr_type`, `hdr_format`, `video_codecs`, `variant_uri`, `notes`.
    /// Nil values are omitted; the two arrays are always written (possibly `[]`). Written by
    /// CastJSON's writer: non-ASCII as UTF-8, `"`, `\` and control characters escaped.
    func json() -> String {
        var object = JSONObject()
        func add(_ key: String, _ value: JSONValue?) {
            if let value { object.append(key: key, value: value) }
        }
        add("content_type", contentType.map(JSONValue.string))
        add("stream_type", streamType.map(JSONValue.string))
        add("width", width.map { .int(Int64($0)) })
        add("height", height.map { .int(Int64($0)) })
        add("hdr_type", hdrType.map(JSONValue.string))
        add("hdr_format", hdrFormat.map(JSONValue.string))
        add("video_codecs", .array(videoCodecs.map(JSONValue.string)))
        add("variant_uri", variantURI.map(JSONValue.string))
        add("notes", .array(notes.map(JSONValue.string)))
        if let container {
            add("container", .string(container.format))
            add("duration", container.duration.map(JSONValue.double))
            add("bit_rate", container.bitRate.map { .int(Int64($0)) })
            add("streams", .array(container.streams.map(Self.json)))
        }
        return JSONValue.object(object).serialized()
    }

    /// One stream's object: the keys `MediaStreamInfo` (CastCore) decodes.
    static func json(_ s: ProbedStream) -> JSONValue {
        var o = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { o.append(key: key, value: value) } }
        add("index", .int(Int64(s.index)))
        add("kind", .string(s.kind.rawValue))
        add("codec", .string(s.codec))
        add("codec_string", s.codecString.map(JSONValue.string))
        add("profile", s.profile.map(JSONValue.string))
        add("profile_id", s.profileID.map { .int(Int64($0)) })
        add("level", s.level.map { .int(Int64($0)) })
        add("width", s.width.map { .int(Int64($0)) })
        add("height", s.height.map { .int(Int64($0)) })
        add("frame_rate", s.frameRate.map(JSONValue.double))
        add("bit_depth", s.bitDepth.map { .int(Int64($0)) })
        add("pixel_format", s.pixelFormat.map(JSONValue.string))
        add("transfer", s.transfer.map(JSONValue.string))
        add("hdr_format", s.hdrFormat.map(JSONValue.string))
        add("dolby_vision_profile", s.dolbyVisionProfile.map { .int(Int64($0)) })
        add("channels", s.channels.map { .int(Int64($0)) })
        add("sample_rate", s.sampleRate.map { .int(Int64($0)) })
        add("language", s.language.map(JSONValue.string))
        add("title", s.title.map(JSONValue.string))
        if s.isDefault { add("default", .bool(true)) }
        return .object(o)
    }
}
