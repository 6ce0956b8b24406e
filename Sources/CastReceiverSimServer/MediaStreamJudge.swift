internal import CCastShims
import CastCore
import CastProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The simulator judging media as the device it plays would: `ffprobe` reads the streams behind a
/// loopback URL the device fetched, and the model's row of the capability table
/// (``DeviceCapabilityTable``, the one castline decides with) says whether it plays.
///
/// Media the model cannot decode fails as a receiver fails it: a progressive file with **104**
/// MEDIA_SRC_NOT_SUPPORTED (the media element's MEDIA_ERR_SRC_NOT_SUPPORTED), HLS/DASH with
/// **110** SOURCE_BUFFER_FAILURE (MSE refuses the codec). Playable media reports `videoInfo` from
/// its real streams. Bytes ffprobe cannot read leave the fetch's verdict as it was (the magic
/// numbers decided), and so does a missing ffprobe (logged once per check).
struct MediaStreamJudge: Sendable {
    struct Verdict: Equatable, Sendable {
        /// nil: plays.
        var failure: DetailedErrorCode?
        var reason: String
        var videoInfo: VideoInfo?
        /// The media's length as ffprobe read it (the container's duration); nil: not known.
        var duration: Double?
    }

    /// At most this long for one ffprobe run.
    var timeout: Double = 10
    var ffprobe: String?

    init(timeout: Double = 10) {
        self.timeout = timeout
        ffprobe = Self.findFFprobe()
    }

    /// Blocking: runs ffprobe (call it off the event loop). nil when the streams could not be read.
    func judge(url: String, contentType: String, family: DeviceCapabilityTable.Family) -> Verdict? {
        guard let ffprobe, let format = probe(url: url, ffprobe: ffprobe), !format.streams.isEmpty else { return nil }
        return Self.verdict(format, contentType: contentType, family: family)
    }

    /// Pure: the decision for probed streams.
    static func verdict(_ format: MediaFormatInfo, contentType: String, family: DeviceCapabilityTable.Family) -> Verdict {
        let plan = MediaPlan.decide(format, family: family)
        let manifest = contentType.lowercased().contains("mpegurl") || contentType.lowercased().contains("dash+xml")
        // A device reads what the container holds; the container itself is the sender's choice
        // (the table lists what Cast documents, a device plays MKV/WebM progressive as Chrome does).
        switch plan.action {
        case .direct, .remux:
            // Accepted where the sources say nothing against it: the reason says so.
            let silent = format.streams.filter { $0.kind == .audio }.compactMap { stream in
                DeviceCapabilityTable.shared.audioCodecs.first { $0.codec == stream.codec && $0.isAcceptedWithoutSource }
            }.map { "\($0.codec): \($0.source)" }
            let played = format.streams.filter { $0.kind == .video || $0.kind == .audio }.map(\.summary).joined(separator: "; ")
            return Verdict(failure: nil, reason: "\(family.name) plays \(played)" + silent.map { " (\($0))" }.joined(),
                           videoInfo: format.videoInfo, duration: format.duration.flatMap { $0.isFinite && $0 > 0 ? $0 : nil })
        case .transcode, .refuse:
            return Verdict(failure: manifest ? .sourceBufferFailure : .mediaSrcNotSupported,
                           reason: plan.reasons.joined(separator: "; "), videoInfo: nil)
        }
    }

    /// ffprobe's `-show_streams -show_format` JSON as castline's stream model.
    static func format(fromFFprobe json: JSONValue) -> MediaFormatInfo {
        var info = MediaFormatInfo()
        info.container = json["format"]?["format_name"]?.string
        info.duration = json["format"]?["duration"]?.string.flatMap(Double.init)
        for s in json["streams"]?.array ?? [] {
            let kind: MediaStreamInfo.Kind = switch s["codec_type"]?.string {
            case "video": (s["disposition"]?["attached_pic"]?.int ?? 0) == 1 ? .attachment : .video
            case "audio": .audio
            case "subtitle": .subtitle
            default: .data
            }
            var stream = MediaStreamInfo(index: Int(s["index"]?.int ?? 0), kind: kind, codec: s["codec_name"]?.string ?? "unknown")
            stream.profile = s["profile"]?.string
            stream.level = s["level"]?.int.flatMap { $0 > 0 ? Int($0) : nil }
            stream.width = s["width"]?.int.map { Int($0) }
            stream.height = s["height"]?.int.map { Int($0) }
            if let rate = s["avg_frame_rate"]?.string, let fps = Self.rate(rate) { stream.frameRate = fps }
            stream.pixelFormat = s["pix_fmt"]?.string
            if let pix = stream.pixelFormat { stream.bitDepth = pix.contains("p12") ? 12 : pix.contains("p10") ? 10 : 8 }
            stream.transfer = s["color_transfer"]?.string
            stream.channels = s["channels"]?.int.map { Int($0) }
            stream.sampleRate = s["sample_rate"]?.string.flatMap { Int($0) }
            stream.language = s["tags"]?["language"]?.string
            stream.title = s["tags"]?["title"]?.string
            stream.isDefault = (s["disposition"]?["default"]?.int ?? 0) == 1
            if kind == .video {
                let dovi = (s["side_data_list"]?.array ?? []).first { $0["side_data_type"]?.string == "DOVI configuration record" }
                if let dovi {
                    stream.hdrFormat = "DolbyVision"
                    stream.dolbyVisionProfile = dovi["dv_profile"]?.int.map { Int($0) }
                } else {
                    stream.hdrFormat = switch stream.transfer {
                    case "smpte2084": "HDR10"
                    case "arib-std-b67": "HLG"
                    default: "SDR"
                    }
                }
            }
            info.streams.append(stream)
        }
        if let video = MediaPlan.mainStreams(info.streams).video, let w = video.width, let h = video.height {
            let hdr: HDRType = switch video.hdrFormat {
            case "DolbyVision": .dolbyVision
            case "HDR10", "HLG": .hdr
            default: .sdr
            }
            info.videoInfo = VideoInfo(width: w, height: h, hdrType: hdr)
            info.hdrType = hdr
        }
        return info
    }

    static func rate(_ text: String) -> Double? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let n = Double(parts[0]), let d = Double(parts[1]), n > 0, d > 0 else { return nil }
        return (n / d).rounded2
    }

    /// Runs ffprobe on `url`; nil when it fails, times out, or prints no JSON.
    func probe(url: String, ffprobe: String) -> MediaFormatInfo? {
        let microseconds = String(Int(timeout * 1_000_000))
        let arguments = [ffprobe, "-v", "error", "-of", "json", "-show_format", "-show_streams", "-rw_timeout", microseconds, url]
        guard let output = Self.run(arguments, timeout: timeout), let json = try? JSONValue.parse(bytes: output) else { return nil }
        return Self.format(fromFFprobe: json)
    }

    /// Runs `argv` tethered to this process, collecting at most 4 MiB of stdout within `timeout`
    /// seconds (then its group is killed). nil on a non-zero exit or a timeout.
    static func run(_ argv: [String], timeout: Double) -> [UInt8]? {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        let pid = castline_spawn_tethered(argv[0], cArgs, fds[1], -1)
        close(fds[1])
        defer { close(fds[0]) }
        guard pid > 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = MonotonicClock.seconds() + timeout
        var timedOut = false
        while output.count < 4 << 20 {
            let left = deadline - MonotonicClock.seconds()
            if left <= 0 { timedOut = true; break }
            var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(left * 1000, 1000)))
            if ready < 0, errno == EINTR { continue }
            if ready == 0 { continue }
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            output += buffer[0..<n]
        }
        if timedOut || output.count >= 4 << 20 { _ = kill(-pid, SIGKILL) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0, errno == EINTR {}
        return !timedOut && raw == 0 ? output : nil
    }

    static func findFFprobe() -> String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") where access("\(folder)/ffprobe", X_OK) == 0 { return "\(folder)/ffprobe" }
        return nil
    }
}
