/// One elementary stream of a media file, as a container probe read it (the media-formats
/// plugin's libavformat probe, or the simulator's ffprobe): what a device must decode.
///
/// JSON keys are snake_case (`codec_string`, `frame_rate`, …), the plugin report's `streams`.
public struct MediaStreamInfo: CastPayloadModel, Hashable {
    public enum Kind: String, Sendable { case video, audio, subtitle, data, attachment }

    public var index: Int
    public var kind: Kind
    /// libavcodec's name: `h264`, `hevc`, `vp9`, `av1`, `aac`, `opus`, `flac`, `subrip`, `ass`, …
    public var codec: String
    public var codecString: String?
    /// libavcodec's profile name: `High`, `Main 10`, `Profile 2`, `LC`.
    public var profile: String?
    public var profileID: Int?
    public var level: Int?
    public var width: Int?
    public var height: Int?
    public var frameRate: Double?
    public var bitDepth: Int?
    public var pixelFormat: String?
    public var transfer: String?
    /// `HDR10`, `HLG`, `DolbyVision`, `SDR` (video).
    public var hdrFormat: String?
    public var dolbyVisionProfile: Int?
    public var channels: Int?
    public var sampleRate: Int?
    public var language: String?
    public var title: String?
    public var isDefault: Bool

    public init(index: Int, kind: Kind, codec: String, codecString: String? = nil, profile: String? = nil, profileID: Int? = nil,
                level: Int? = nil, width: Int? = nil, height: Int? = nil, frameRate: Double? = nil, bitDepth: Int? = nil,
                pixelFormat: String? = nil, transfer: String? = nil, hdrFormat: String? = nil, dolbyVisionProfile: Int? = nil,
                channels: Int? = nil, sampleRate: Int? = nil, language: String? = nil, title: String? = nil, isDefault: Bool = false) {
        self.index = index
        self.kind = kind
        self.codec = codec
        self.codecString = codecString
        self.profile = profile
        self.profileID = profileID
        self.level = level
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.bitDepth = bitDepth
        self.pixelFormat = pixelFormat
        self.transfer = transfer
        self.hdrFormat = hdrFormat
        self.dolbyVisionProfile = dolbyVisionProfile
        self.channels = channels
        self.sampleRate = sampleRate
        self.language = language
        self.title = title
        self.isDefault = isDefault
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        self.init(index: 0, kind: .data, codec: "")
        var kindText: String?
        var codecText: String?
        for (key, value) in try json.modelObject() {
            switch key {
            case "index": index = try value.decodeInt(key.string) ?? 0
            case "kind": kindText = try value.decodeString(key.string)
            case "codec": codecText = try value.decodeString(key.string)
            case "codec_string": codecString = try value.decodeString(key.string)
            case "profile": profile = try value.decodeString(key.string)
            case "profile_id": profileID = try value.decodeInt(key.string)
            case "level": level = try value.decodeInt(key.string)
            case "width": width = try value.decodeInt(key.string)
            case "height": height = try value.decodeInt(key.string)
            case "frame_rate": frameRate = try value.decodeDouble(key.string)
            case "bit_depth": bitDepth = try value.decodeInt(key.string)
            case "pixel_format": pixelFormat = try value.decodeString(key.string)
            case "transfer": transfer = try value.decodeString(key.string)
            case "hdr_format": hdrFormat = try value.decodeString(key.string)
            case "dolby_vision_profile": dolbyVisionProfile = try value.decodeInt(key.string)
            case "channels": channels = try value.decodeInt(key.string)
            case "sample_rate": sampleRate = try value.decodeInt(key.string)
            case "language": language = try value.decodeString(key.string)
            case "title": title = try value.decodeString(key.string)
            case "default": isDefault = try value.decodeBool(key.string) ?? false
            default: break
            }
        }
        codec = try requireKey(codecText, "codec")
        kind = Kind(rawValue: try requireKey(kindText, "kind")) ?? .data
    }

    public var json: JSONValue {
        var o = JSONObject()
        func add(_ key: String, _ value: JSONValue?) { if let value { o.append(key: key, value: value) } }
        add("index", .int(Int64(index)))
        add("kind", .string(kind.rawValue))
        add("codec", .string(codec))
        add("codec_string", codecString.map(JSONValue.string))
        add("profile", profile.map(JSONValue.string))
        add("profile_id", profileID.map { .int(Int64($0)) })
        add("level", level.map { .int(Int64($0)) })
        add("width", width.map { .int(Int64($0)) })
        add("height", height.map { .int(Int64($0)) })
        add("frame_rate", frameRate.map(JSONValue.double))
        add("bit_depth", bitDepth.map { .int(Int64($0)) })
        add("pixel_format", pixelFormat.map(JSONValue.string))
        add("transfer", transfer.map(JSONValue.string))
        add("hdr_format", hdrFormat.map(JSONValue.string))
        add("dolby_vision_profile", dolbyVisionProfile.map { .int(Int64($0)) })
        add("channels", channels.map { .int(Int64($0)) })
        add("sample_rate", sampleRate.map { .int(Int64($0)) })
        add("language", language.map(JSONValue.string))
        add("title", title.map(JSONValue.string))
        if isDefault { add("default", .bool(true)) }
        return .object(o)
    }

    /// One line for people: `video 0: hevc Main 10 3840x2160 24 fps 10-bit HDR10`.
    public var summary: String {
        var parts = ["\(kind.rawValue) \(index):", codec]
        if let profile { parts.append(profile) }
        if let width, let height { parts.append("\(width)x\(height)") }
        if let frameRate { parts.append("\(frameRate.rounded2.formatted) fps") }
        if let bitDepth, kind == .video { parts.append("\(bitDepth)-bit") }
        if let hdrFormat, kind == .video { parts.append(hdrFormat) }
        if let channels { parts.append("\(channels) ch") }
        if let sampleRate { parts.append("\(sampleRate) Hz") }
        if let language { parts.append("[\(language)]") }
        if let title { parts.append("\"\(title)\"") }
        return parts.joined(separator: " ")
    }
}
