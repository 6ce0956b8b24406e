/// What a media-format probe found out about a URL, file or manifest: the fields a LOAD needs
/// (contentType, streamType) and the video the device will have to show (size, dynamic range).
///
/// Decoded from the probe's JSON report (see `castline_media_format_vtable.probe`). Value type.
public struct MediaFormatInfo: Sendable, Equatable {
    public var contentType: String?
    /// nil when the probe cannot tell (e.g. an HLS master playlist before its variant was read).
    public var streamType: StreamType?
    /// The largest video rendition: size and Cast `hdrType`; nil when no size is known.
    public var videoInfo: VideoInfo?
    /// The Cast `hdrType` even when no size is known.
    public var hdrType: HDRType?
    /// Finer than `hdrType`: `HDR10`, `HLG`, `DolbyVision`, `SDR`.
    public var hdrFormat: String?
    public var videoCodecs: [String]
    /// HLS master: the variant playlist whose `#EXT-X-ENDLIST` decides LIVE vs BUFFERED.
    public var variantURI: String?
    /// Why the probe decided what it did, for logs and `--verbose` output.
    public var notes: [String]
    /// The container's demuxer name (`matroska,webm`, `mov,mp4,m4a,3gp,3g2,mj2`), when a
    /// container probe read the file; nil for manifests and names only.
    public var container: String?
    /// Seconds, when the container says.
    public var duration: Double?
    /// Every stream the container probe found (empty when no container was read).
    public var streams: [MediaStreamInfo] = []

    public init(contentType: String? = nil, streamType: StreamType? = nil, videoInfo: VideoInfo? = nil, hdrType: HDRType? = nil,
                hdrFormat: String? = nil, videoCodecs: [String] = [], variantURI: String? = nil, notes: [String] = []) {
        self.contentType = contentType
        self.streamType = streamType
        self.videoInfo = videoInfo
        self.hdrType = hdrType
        self.hdrFormat = hdrFormat
        self.videoCodecs = videoCodecs
        self.variantURI = variantURI
        self.notes = notes
    }

    /// Decodes a probe report; unknown keys are ignored, wrong types are errors.
    public init(report json: JSONValue) throws(CastPayloadError) {
        self.init()
        var width: Int?
        var height: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "content_type": contentType = try value.decodeString(key.string)
            case "stream_type": streamType = try value.decodeString(key.string).map { StreamType(rawValue: $0) }
            case "width": width = try value.decodeInt(key.string)
            case "height": height = try value.decodeInt(key.string)
            case "hdr_type": hdrType = try value.decodeString(key.string).map { HDRType(rawValue: $0) }
            case "hdr_format": hdrFormat = try value.decodeString(key.string)
            case "video_codecs": videoCodecs = try value.decodeStrings(key.string) ?? []
            case "variant_uri": variantURI = try value.decodeString(key.string)
            case "notes": notes = try value.decodeStrings(key.string) ?? []
            case "container": container = try value.decodeString(key.string)
            case "duration": duration = try value.decodeDouble(key.string)
            case "streams": streams = try value.decodeModels(key.string) ?? []
            default: break
            }
        }
        if let width, let height, width > 0, height > 0 { videoInfo = VideoInfo(width: width, height: height, hdrType: hdrType) }
    }

    /// Fills what `other` knows and `self` does not (a variant playlist's stream type after the master's video info).
    public func merging(_ other: MediaFormatInfo) -> MediaFormatInfo {
        var result = self
        result.contentType = contentType ?? other.contentType
        result.streamType = streamType ?? other.streamType
        result.videoInfo = videoInfo ?? other.videoInfo
        result.hdrType = hdrType ?? other.hdrType
        result.hdrFormat = hdrFormat ?? other.hdrFormat
        if result.videoCodecs.isEmpty { result.videoCodecs = other.videoCodecs }
        result.container = container ?? other.container
        result.duration = duration ?? other.duration
        if result.streams.isEmpty { result.streams = other.streams }
        result.notes += other.notes
        return result
    }
}
