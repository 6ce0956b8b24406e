/// `videoInfo.hdrType`: the dynamic range of the video being played (open enum, lower-case on the wire).
///
/// The JSON strings `sdr`, `hdr`, `dv` are believed correct but unverified against a device; unknown
/// strings are preserved. ``iosValue`` / ``init(iosValue:)`` map to `GCKVideoInfoHDRType`
/// (Unknown = -1, SDR = 0, DV = 1, HDR = 2).
public struct HDRType: OpenStringEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// `sdr`: standard dynamic range.
    public static let sdr: HDRType = "sdr"
    /// `hdr`: high dynamic range (HDR10 and similar).
    public static let hdr: HDRType = "hdr"
    /// `dv`: Dolby Vision.
    public static let dolbyVision: HDRType = "dv"

    public static let knownValues: [HDRType] = [.sdr, .hdr, .dolbyVision]

    /// The iOS SDK's `GCKVideoInfoHDRType` number: SDR 0, DV 1, HDR 2, anything else -1 (Unknown).
    public var iosValue: Int {
        switch self {
        case .sdr: return 0
        case .dolbyVision: return 1
        case .hdr: return 2
        default: return -1
        }
    }

    /// Maps a `GCKVideoInfoHDRType` number; nil for -1 (Unknown) and any other number.
    public init?(iosValue: Int) {
        switch iosValue {
        case 0: self = .sdr
        case 1: self = .dolbyVision
        case 2: self = .hdr
        default: return nil
        }
    }
}
