/// What castline does with a media file for one device, decided before the LOAD from the file's
/// streams (a container probe) and the device family's row of ``DeviceCapabilityTable``: play it
/// as is, remux it (streams copied into a container the device reads), transcode the streams the
/// device cannot decode, or refuse with the reason. Pure.
public struct MediaPlan: Sendable, Equatable {
    public enum Action: String, Sendable { case direct, remux, transcode, refuse }

    public var action: Action
    /// The device family the decision was made for.
    public var family: String
    /// Transcode: the video is re-encoded to H.264 (High, 8-bit SDR) at most `targetHeight` lines.
    public var transcodeVideo = false
    /// Transcode: the audio is re-encoded to AAC-LC stereo.
    public var transcodeAudio = false
    /// Transcode: the output's largest height and frame rate.
    public var targetHeight: Int?
    public var targetFPS: Double?
    /// Why (one line each): what does not fit, or that everything does.
    public var reasons: [String]

    public init(action: Action, family: String, transcodeVideo: Bool = false, transcodeAudio: Bool = false, targetHeight: Int? = nil,
                targetFPS: Double? = nil, reasons: [String]) {
        self.action = action
        self.family = family
        self.transcodeVideo = transcodeVideo
        self.transcodeAudio = transcodeAudio
        self.targetHeight = targetHeight
        self.targetFPS = targetFPS
        self.reasons = reasons
    }

    /// The video stream that decides (the largest), the audio stream (default first).
    public static func mainStreams(_ streams: [MediaStreamInfo]) -> (video: MediaStreamInfo?, audio: MediaStreamInfo?) {
        let video = streams.filter { $0.kind == .video }.max { ($0.width ?? 0) * ($0.height ?? 0) < ($1.width ?? 0) * ($1.height ?? 0) }
        let audios = streams.filter { $0.kind == .audio }
        return (video, audios.first { $0.isDefault } ?? audios.first)
    }

    /// Decides for `format` (a container probe's result) on `family`.
    public static func decide(_ format: MediaFormatInfo, family: DeviceCapabilityTable.Family,
                              table: DeviceCapabilityTable = .shared) -> MediaPlan {
        var plan = MediaPlan(action: .direct, family: family.id, reasons: [])
        let (video, audio) = mainStreams(format.streams)
        if video == nil, audio == nil {
            plan.action = .refuse
            plan.reasons = ["no audio or video stream in \(format.container ?? "the file")"]
            return plan
        }
        if let video {
            guard family.video else {
                plan.action = .refuse
                plan.reasons = ["\(family.name) is audio only and this is video (\(video.codec) \(video.width ?? 0)x\(video.height ?? 0))"]
                return plan
            }
            let problems = videoProblems(video, family: family)
            if !problems.isEmpty {
                plan.transcodeVideo = true
                plan.reasons += problems
                let sourceHeight = video.height ?? 1080
                plan.targetHeight = min(sourceHeight, min(family.maxHeight, h264Limit(family)?.maxHeight ?? 1080))
                plan.targetFPS = min(video.frameRate ?? 30, min(family.maxFPS, h264Limit(family)?.maxFPS ?? 30))
            }
        }
        if let audio {
            let problems = audioProblems(audio, table: table)
            if !problems.isEmpty {
                plan.transcodeAudio = true
                plan.reasons += problems
            }
        }
        if plan.transcodeVideo || plan.transcodeAudio {
            plan.action = .transcode
            return plan
        }
        let container = containerName(format.container)
        if let container, table.containers.contains(container) {
            plan.reasons = ["\(family.name) plays \(describe(video, audio)) in \(container) as is"]
        } else {
            plan.action = .remux
            plan.reasons = ["\(family.name) decodes \(describe(video, audio)) but not the \(format.container ?? "unknown") container: remuxed to fragmented MP4"]
        }
        return plan
    }

    static func videoProblems(_ v: MediaStreamInfo, family: DeviceCapabilityTable.Family) -> [String] {
        var problems: [String] = []
        guard let limits = family.videoCodecs.first(where: { $0.codec == v.codec }) else {
            return ["\(family.name) does not decode \(v.codec) video (it decodes \(family.videoCodecs.map(\.codec).joined(separator: ", ")))"]
        }
        if let profile = v.profile, !limits.profiles.isEmpty, !limits.profiles.contains(profile) {
            problems.append("\(family.name) does not decode \(v.codec) profile \(profile)")
        }
        if let level = v.level, let max = limits.maxLevel, level > max {
            problems.append("\(v.codec) level \(level) is above the \(max) \(family.name) decodes")
        }
        let (w, h) = (v.width ?? 0, v.height ?? 0)
        let long = Swift.max(w, h), short = Swift.min(w, h)
        let maxHeight = Swift.min(family.maxHeight, limits.maxHeight ?? family.maxHeight)
        let maxWidth = family.maxWidth * maxHeight / Swift.max(family.maxHeight, 1)
        if long > maxWidth || short > maxHeight {
            problems.append("\(w)x\(h) is larger than the \(maxWidth)x\(maxHeight) \(family.name) shows in \(v.codec)")
        }
        if let fps = v.frameRate, fps > (limits.maxFPS ?? family.maxFPS) + 0.5 {
            problems.append("\(fps.rounded2.formatted) fps is above the \((limits.maxFPS ?? family.maxFPS).rounded2.formatted) fps \(family.name) decodes in \(v.codec)")
        }
        if let hdr = v.hdrFormat, hdr != "SDR", !family.hdr.contains(hdr) {
            problems.append("\(family.name) cannot show \(hdr)" + (family.hdr.isEmpty ? "" : " (only \(family.hdr.joined(separator: ", ")))"))
        }
        return problems
    }

    static func audioProblems(_ a: MediaStreamInfo, table: DeviceCapabilityTable) -> [String] {
        guard let limits = table.audioCodecs.first(where: { $0.codec == a.codec }) else {
            return ["Cast devices do not decode \(a.codec) audio"]
        }
        if let profile = a.profile, !limits.profiles.isEmpty, !limits.profiles.contains(profile) {
            return ["Cast devices do not decode \(a.codec) profile \(profile)"]
        }
        if let rate = a.sampleRate, let max = limits.maxSampleRate, rate > max {
            return ["\(a.codec) at \(rate) Hz is above the \(max) Hz Cast devices decode"]
        }
        return []
    }

    /// The H.264 row of a family: what a transcode may produce.
    static func h264Limit(_ family: DeviceCapabilityTable.Family) -> DeviceCapabilityTable.VideoCodec? {
        family.videoCodecs.first { $0.codec == "h264" }
    }

    /// The table's short container name of a libavformat demuxer name.
    public static func containerName(_ demuxer: String?) -> String? {
        guard let demuxer else { return nil }
        let names = demuxer.split(separator: ",").map(String.init)
        if names.contains("mp4") || names.contains("mov") { return "mp4" }
        if names.contains("matroska") { return "matroska" }
        if demuxer == "mpegts" { return "mp2t" }
        return names.first
    }

    private static func describe(_ video: MediaStreamInfo?, _ audio: MediaStreamInfo?) -> String {
        [video.map { "\($0.codec)\($0.profile.map { " \($0)" } ?? "")" }, audio.map(\.codec)].compactMap { $0 }.joined(separator: " + ")
    }

    /// One line for people: `transcode (video → H.264 1080p, audio → AAC): …`.
    public var summary: String {
        var head = action.rawValue
        if action == .transcode {
            var parts: [String] = []
            if transcodeVideo { parts.append("video → H.264 \(targetHeight.map { "\($0)p" } ?? "")") }
            if transcodeAudio { parts.append("audio → AAC") }
            head += " (" + parts.joined(separator: ", ") + ")"
        }
        return head + ": " + reasons.joined(separator: "; ")
    }

    public var json: JSONValue {
        var o = JSONObject()
        o.append(key: "action", value: .string(action.rawValue))
        o.append(key: "family", value: .string(family))
        if action == .transcode {
            o.append(key: "transcodeVideo", value: .bool(transcodeVideo))
            o.append(key: "transcodeAudio", value: .bool(transcodeAudio))
            if let targetHeight { o.append(key: "targetHeight", value: .int(Int64(targetHeight))) }
        }
        o.append(key: "reasons", value: .array(reasons.map(JSONValue.string)))
        return .object(o)
    }
}
