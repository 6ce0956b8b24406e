import CastCore
import CastSender
import Glibc

/// What `castline status` shows for one device at one moment: the app, the device volume and
/// the media status, with the playback position estimated between status messages.
struct StatusSnapshot: Sendable {
    var deviceName: String
    var deviceID: String
    var endpoint: String
    var app: ApplicationInfo?
    var deviceVolume: Double?
    var deviceMuted: Bool?
    var media: MediaStatus?
    /// Monotonic seconds when `media` arrived (for the position estimate).
    var receivedAt: Double

    /// The position now: the reported time plus the time since, at the playback rate, while
    /// playing (capped at the duration).
    func position(at now: Double) -> Double? {
        guard let media else { return nil }
        var position = media.currentTime
        if media.effectivePlayerState == .playing { position += max(0, now - receivedAt) * (media.playbackRate > 0 ? media.playbackRate : 1) }
        if let duration = media.effectiveMedia?.duration, duration > 0 { position = min(position, duration) }
        return position
    }

    var state: String {
        guard let media else { return app == nil ? "NO_APP" : "NO_MEDIA" }
        // (NO_APP: nothing casts, or the app was just stopped.)
        return media.effectivePlayerState.rawValue
    }

    var title: String? { media?.effectiveMedia?.metadata?.title }
    var subtitle: String? { media?.effectiveMedia?.metadata?.subtitle ?? media?.effectiveMedia?.metadata?.studio }
    var badge: String? { media?.videoInfo?.badge }

    /// The `--json` object (documented in README): flat, stable keys plus the raw media status.
    func json(at now: Double) -> JSONValue {
        var o = JSONObject()
        o.set("device", .string(deviceName))
        o.set("id", .string(deviceID))
        o.set("endpoint", .string(endpoint))
        o.set("state", .string(state))
        if let app {
            o.set("app", .string(app.displayName))
            o.set("appId", .string(app.appId))
            o.set("sessionId", .string(app.sessionId))
        }
        if let deviceVolume { o.set("volume", .double((deviceVolume * 1000).rounded() / 1000)) }
        if let deviceMuted { o.set("muted", .bool(deviceMuted)) }
        if let media {
            if let reason = media.idleReason { o.set("idleReason", .string(reason.rawValue)) }
            let info = media.effectiveMedia
            if let title { o.set("title", .string(title)) }
            if let subtitle { o.set("subtitle", .string(subtitle)) }
            if let info {
                o.set("contentId", .string(info.contentId))
                if !info.contentType.isEmpty { o.set("contentType", .string(info.contentType)) }
                o.set("streamType", .string(info.streamType.rawValue))
                if let duration = info.duration { o.set("duration", .double(duration)) }
            }
            if let position = position(at: now) { o.set("currentTime", .double((position * 1000).rounded() / 1000)) }
            o.set("playbackRate", .double(media.playbackRate))
            if let video = media.videoInfo {
                o.set("video", video.json)
                o.set("badge", .string(video.badge))
            }
            o.set("mediaSessionId", .int(Int64(media.mediaSessionId)))
            o.set("mediaStatus", media.json)
        }
        return .object(o)
    }
}

/// Renders a snapshot as the terminal view: a few lines with title, state, a progress bar with
/// elapsed/total, volume and the 4K/HDR badge. Pure; `width` is the terminal width.
enum StatusView {
    static func render(_ s: StatusSnapshot, now: Double, width: Int) -> [String] {
        let width = max(40, min(width, 200))
        var lines: [String] = []
        var head = "\(s.deviceName)"
        if let app = s.app { head += " · \(app.displayName.isEmpty ? app.appId : app.displayName)" }
        if let badge = s.badge { head += "  [\(badge)]" }
        lines.append(clip(head, width))
        lines.append(clip("  \(s.title ?? (s.media == nil ? "(nothing playing)" : "(untitled)"))", width))
        if let subtitle = s.subtitle { lines.append(clip("  \(subtitle)", width)) }
        let symbol: String
        switch s.state {
        case "PLAYING": symbol = "▶"
        case "PAUSED": symbol = "⏸"
        case "BUFFERING", "LOADING": symbol = "…"
        default: symbol = "■"
        }
        var stateText = "  \(symbol) \(s.state)"
        if let reason = s.media?.idleReason { stateText += " (\(reason.rawValue))" }
        lines.append(stateText)
        let position = s.position(at: now) ?? 0
        let duration = s.media?.effectiveMedia?.duration
        let times = "\(clock(position)) / \(duration.map(clock) ?? (s.media?.effectiveMedia?.streamType == .live ? "LIVE" : "--:--"))"
        let barWidth = max(10, width - times.count - 6)
        var filled = 0
        if let duration, duration > 0 { filled = Int((position / duration * Double(barWidth)).rounded(.down)) }
        filled = min(max(filled, 0), barWidth)
        lines.append("  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "] " + times)
        var volume = "  volume "
        if let level = s.deviceVolume { volume += "\(Int((level * 100).rounded()))%" } else { volume += "?" }
        if s.deviceMuted == true { volume += " (muted)" }
        lines.append(volume)
        return lines
    }

    /// `1:02:03` or `02:03`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds.isFinite ? seconds : 0))
        let h = total / 3600, m = (total / 60) % 60, sec = total % 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(sec))" : "\(two(m)):\(two(sec))"
    }

    static func clip(_ text: String, _ width: Int) -> String {
        text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    /// The terminal width (COLUMNS, then TIOCGWINSZ, then 80).
    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }
}
