/// `videoInfo` of a MEDIA_STATUS: size and dynamic range of the video being played
/// (`GCKVideoInfo`, Web Receiver `VideoInformation`).
///
/// Never observed in a real capture; its position in MEDIA_STATUS is unverified.
public struct VideoInfo: CastPayloadModel, Hashable {
    public var width: Int
    public var height: Int
    /// nil when absent (iOS: Unknown).
    public var hdrType: HDRType?

    public init(width: Int, height: Int, hdrType: HDRType? = nil) {
        self.width = width
        self.height = height
        self.hdrType = hdrType
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        var width: Int?
        var height: Int?
        for (key, value) in try json.modelObject() {
            switch key {
            case "width": width = try value.decodeInt(key.string)
            case "height": height = try value.decodeInt(key.string)
            case "hdrType": hdrType = try value.decodeEnum(key.string)
            default: break
            }
        }
        self.width = try requireKey(width, "width")
        self.height = try requireKey(height, "height")
    }

    public var json: JSONValue {
        var object = JSONObject()
        object.reserveCapacity(3)
        object.put("width", width)
        object.put("height", height)
        object.put("hdrType", hdrType)
        return .object(object)
    }
}

extension VideoInfo {
    /// At least 3840 × 2160 (either orientation): UHD "4K".
    public var is4K: Bool {
        (width >= 3840 && height >= 2160) || (width >= 2160 && height >= 3840)
    }

    /// HDR10-like or Dolby Vision (an unknown or missing `hdrType` is not HDR).
    public var isHDR: Bool {
        hdrType == .hdr || hdrType == .dolbyVision
    }

    /// A short badge for status views: `4K HDR`, `4K DV`, `1080p`, `720p SDR`…
    public var badge: String {
        let size: String
        if is4K { size = "4K" } else { size = "\(min(width, height))p" }
        switch hdrType {
        case .hdr?: return size + " HDR"
        case .dolbyVision?: return size + " DV"
        case .sdr?: return size + " SDR"
        default: return size
        }
    }
}
