/// What each Cast device family plays, from Google's published supported-media page: one JSON
/// file (`Sources/CastCore/Resources/device-capabilities.json`, embedded by
/// `scripts/generate-device-capabilities.sh`). Both the sender (before a LOAD) and the simulator
/// (judging a LOAD as a device) read it, so the two cannot disagree.
public struct DeviceCapabilityTable: Sendable, Equatable {
    /// Limits on one video codec of a family.
    public struct VideoCodec: Sendable, Equatable {
        public var codec: String
        /// libavcodec profile names; empty = any.
        public var profiles: [String]
        /// H.264 `level_idc` (42 = 4.2), HEVC `general_level_idc` (153 = 5.1), AV1 `seq_level_idx`.
        public var maxLevel: Int?
        public var maxHeight: Int?
        public var maxFPS: Double?
    }

    public struct AudioCodec: Sendable, Equatable {
        public var codec: String
        public var profiles: [String]
        public var maxSampleRate: Int?
        /// Where the rule comes from; one starting `silent:` is accepted because the sources say
        /// nothing against it (issue 47: every rule cites its source).
        public var source: String = ""

        /// The sources are silent on this codec: it is accepted, not documented.
        public var isAcceptedWithoutSource: Bool { source.hasPrefix("silent") }
    }

    /// One device family's row.
    public struct Family: Sendable, Equatable {
        public var id: String
        public var name: String
        public var models: [String]
        public var video: Bool
        public var maxWidth: Int
        public var maxHeight: Int
        public var maxFPS: Double
        /// `HDR10`, `HLG`, `DolbyVision`; SDR always plays.
        public var hdr: [String]
        public var videoCodecs: [VideoCodec]
        /// Where the row's limits come from.
        public var source: String = ""
    }

    public var source: String
    /// Containers every family reads, by short name (`mp4`, `webm`, `mp2t`, `mp3`, `ogg`, `wav`, `flac`, `aac`).
    public var containers: [String]
    public var audioCodecs: [AudioCodec]
    public var families: [Family]
    public var defaultVideo: String
    public var defaultAudioOnly: String

    /// The table this build carries.
    public static let shared: DeviceCapabilityTable = {
        do { return try DeviceCapabilityTable(json: try JSONValue.parse(embeddedJSON)) } catch {
            fatalError("device-capabilities.json does not parse: \(error)")
        }
    }()

    public func family(id: String) -> Family? { families.first { $0.id == id } }

    /// The row for a device: its model name (`md`) when the table knows it, else by the `ca`
    /// bits' video-out bit (nil = unknown, taken as video). Families are found by exact model
    /// name, then case-insensitively.
    public func family(model: String, videoOut: Bool?) -> Family {
        if let exact = families.first(where: { $0.models.contains(model) }) { return exact }
        let lower = model.lowercased()
        if let loose = families.first(where: { $0.models.contains { $0.lowercased() == lower } }) { return loose }
        return family(id: videoOut == false ? defaultAudioOnly : defaultVideo)!
    }

    public init(json: JSONValue) throws(CastPayloadError) {
        func strings(_ v: JSONValue?) -> [String] { v?.array?.compactMap(\.string) ?? [] }
        func int(_ v: JSONValue?) -> Int? { v?.int.map(Int.init) }
        guard let families = json["families"]?.array, !families.isEmpty else { throw .missingKey("families") }
        source = json["source"]?.string ?? ""
        containers = strings(json["containers"])
        audioCodecs = (json["audio"]?.array ?? []).compactMap { a in
            a["codec"]?.string.map {
                AudioCodec(codec: $0, profiles: strings(a["profiles"]), maxSampleRate: int(a["max_sample_rate"]),
                           source: a["source"]?.string ?? "")
            }
        }
        self.families = try families.map { (f) throws(CastPayloadError) -> Family in
            guard let id = f["id"]?.string else { throw .missingKey("id") }
            let video = f["video"]?.bool ?? false
            return Family(
                id: id, name: f["name"]?.string ?? id, models: strings(f["models"]), video: video,
                maxWidth: int(f["max_width"]) ?? 0, maxHeight: int(f["max_height"]) ?? 0, maxFPS: f["max_fps"]?.double ?? 0,
                hdr: strings(f["hdr"]),
                videoCodecs: (f["video_codecs"]?.array ?? []).compactMap { c in
                    c["codec"]?.string.map {
                        VideoCodec(codec: $0, profiles: strings(c["profiles"]), maxLevel: int(c["max_level"]),
                                   maxHeight: int(c["max_height"]), maxFPS: c["max_fps"]?.double)
                    }
                }, source: f["source"]?.string ?? "")
        }
        defaultVideo = json["default_video"]?.string ?? "chromecast"
        defaultAudioOnly = json["default_audio_only"]?.string ?? "speaker"
        guard family(id: defaultVideo) != nil, family(id: defaultAudioOnly) != nil else { throw .missingKey("default_video") }
    }
}
