import CastCore

/// What a device can show, as far as castline can tell before loading: used to warn before
/// 4K or HDR goes to a device that cannot display it (the media would be downscaled, tone-mapped
/// or refused). `nil` answers mean unknown: no warning is given on a guess.
///
/// Sources, strongest first: device authentication's audio-only policy, the mDNS `ca` bits
/// (no video-out bit → audio only), then a small table of model names (`md`) whose display
/// limits are public. Cast reports no 4K or HDR capability bit, so other models stay unknown.
public struct DisplaySupport: Sendable, Equatable {
    public var video: Bool?
    public var uhd: Bool?
    public var hdr: Bool?

    public init(video: Bool? = nil, uhd: Bool? = nil, hdr: Bool? = nil) {
        self.video = video
        self.uhd = uhd
        self.hdr = hdr
    }

    /// Known models: exact `md` strings. (Chromecast gen 1–3: 1080p SDR; Ultra and Google TV: 4K HDR.)
    static let models: [String: DisplaySupport] = [
        "Chromecast": DisplaySupport(video: true, uhd: false, hdr: false),
        "Chromecast Ultra": DisplaySupport(video: true, uhd: true, hdr: true),
        "Chromecast with Google TV": DisplaySupport(video: true, uhd: true, hdr: true),
        "Google TV Streamer": DisplaySupport(video: true, uhd: true, hdr: true),
        "Google Home": DisplaySupport(video: false, uhd: false, hdr: false),
        "Google Home Mini": DisplaySupport(video: false, uhd: false, hdr: false),
        "Google Nest Mini": DisplaySupport(video: false, uhd: false, hdr: false),
        "Google Nest Audio": DisplaySupport(video: false, uhd: false, hdr: false),
        "Google Cast Group": DisplaySupport(video: false, uhd: false, hdr: false),
    ]

    /// What is known about `device`; `audioOnly` is the session's device-auth answer.
    public static func of(_ device: CastDevice, audioOnly: Bool = false) -> DisplaySupport {
        if audioOnly { return DisplaySupport(video: false, uhd: false, hdr: false) }
        if let caps = device.capabilities, !caps.contains(.videoOut) { return DisplaySupport(video: false, uhd: false, hdr: false) }
        return models[device.modelName] ?? DisplaySupport()
    }

    /// Warnings for loading media described by `format` onto a device with this support. Empty
    /// when nothing is wrong or nothing is known.
    public func warnings(for format: MediaFormatInfo, device: CastDevice) -> [String] {
        let hasVideo = format.videoInfo != nil || !format.videoCodecs.isEmpty
        var result: [String] = []
        if hasVideo, video == false {
            result.append("\(device.friendlyName) (\(device.modelName.isEmpty ? "unknown model" : device.modelName)) has no video output; only the audio will play")
            return result
        }
        if let info = format.videoInfo, info.is4K, uhd == false {
            result.append("\(device.friendlyName) (\(device.modelName)) cannot show 4K: \(info.width)x\(info.height) will be downscaled or refused")
        }
        let hdrType = format.videoInfo?.hdrType ?? format.hdrType
        if hdrType == .hdr || hdrType == .dolbyVision, hdr == false {
            result.append("\(device.friendlyName) (\(device.modelName)) cannot show HDR: \(format.hdrFormat ?? hdrType!.rawValue) will be tone-mapped to SDR or refused")
        }
        return result
    }
}

/// The mDNS `ca` capability bits (Chromium `CastDeviceCapability`). Bits above 5 are set on real
/// devices but their meaning is not public; they are kept in ``rawValue``.
public struct CastDeviceCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let videoOut = CastDeviceCapabilities(rawValue: 1 << 0)
    public static let videoIn = CastDeviceCapabilities(rawValue: 1 << 1)
    public static let audioOut = CastDeviceCapabilities(rawValue: 1 << 2)
    public static let audioIn = CastDeviceCapabilities(rawValue: 1 << 3)
    public static let devMode = CastDeviceCapabilities(rawValue: 1 << 4)
    public static let multizoneGroup = CastDeviceCapabilities(rawValue: 1 << 5)
}
