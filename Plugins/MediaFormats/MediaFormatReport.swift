// The result of media format analysis and its JSON form. Pure stdlib: no Foundation.

/// What format analysis found out about a media URL / content type / manifest: the values a
/// Cast sender puts in `MediaInformation` (contentType, streamType) and `VideoInfo` (width,
/// height, hdrType), plus human-readable reasons in `notes`. Nil means "not known".
public struct MediaFormatReport: Equatable, Sendable {
    /// Normalised MIME type (`application/x-mpegURL`, `video/mp4`, …).
    public var contentType: String?
    /// `LIVE` or `BUFFERED`; nil when unknown (HLS master playlists, plain files).
    public var streamType: String?
    public var width: Int?
    public var height: Int?
    /// Cast `VideoInfo.hdrType`: `sdr`, `hdr` or `dv`.
    public var hdrType: String?
    /// Finer: `HDR10`, `HLG`, `DolbyVision` or `SDR`.
    public var hdrFormat: String?
    /// Video codec strings of the chosen variant / representation (supplemental Dolby Vision
    /// codecs appended, brands dropped). Audio and text codecs are not listed.
    public var videoCodecs: [String]
    /// HLS master playlists: the URI (as written, unresolved) of the chosen (largest) variant,
    /// whose media playlist tells LIVE from BUFFERED. Nil otherwise.
    public var variantURI: String?
    /// Human-readable reasons, e.g. `VIDEO-RANGE=PQ on 3840x2160 variant`.
    public var notes: [String]

    public init(
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
    /// Nil values are omitted; the two arrays are always written (possibly `[]`). Strings escape
    /// `"` and `\` with a backslash and every control character below U+0020 as `\u00xx`
    /// (lowercase hex); everything else, non-ASCII included, is written as UTF-8.
    public func json() -> String {
        var fields: [String] = []
        func add(_ key: String, _ value: String?) {
            if let value { fields.append("\"\(key)\":" + Self.quoted(value)) }
        }
        func add(_ key: String, _ value: Int?) {
            if let value { fields.append("\"\(key)\":\(value)") }
        }
        add("content_type", contentType)
        add("stream_type", streamType)
        add("width", width)
        add("height", height)
        add("hdr_type", hdrType)
        add("hdr_format", hdrFormat)
        fields.append("\"video_codecs\":[" + videoCodecs.map(Self.quoted).joined(separator: ",") + "]")
        add("variant_uri", variantURI)
        fields.append("\"notes\":[" + notes.map(Self.quoted).joined(separator: ",") + "]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// `s` as a JSON string literal.
    static func quoted(_ s: String) -> String {
        let hex: [Character] = Array("0123456789abcdef")
        var out = "\""
        out.reserveCapacity(s.utf8.count + 2)
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                out += "\\u00"
                out.append(hex[Int(scalar.value >> 4)])
                out.append(hex[Int(scalar.value & 0xF)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }
}
