import CastlineLocalMedia
import CastCore

/// `castline announce` / `POST /v1/devices/{device}/announce`: what to play, at which volume,
/// and how long it may take (`{"media": …, "volume": 60, "content_type": …, "timeout": 120}`).
package struct AnnounceArguments: Sendable, Equatable {
    /// An http(s) URL, or an absolute path the daemon serves.
    package var media: String
    /// Which local files it may serve when not the control plane's: set by castline itself for
    /// a config job's announcement, never from a request.
    package var localMedia: LocalMediaPolicy?
    /// The device volume during the announcement, in percent (nil: as it is).
    package var volume: Int?
    package var contentType: String?
    /// Seconds the announcement may play before it is cut short and the device restored.
    package var timeout = 120.0
    /// Answer once the device is restored (false: once the announcement is under way; the hub
    /// restores the device on its own).
    package var wait = true

    package init(media: String) { self.media = media }

    package init(json: JSONValue) throws(ControlError) {
        let body = try ArgumentObject(json, action: .announce)
        guard let media = try body.string("media"), !media.isEmpty else {
            throw ControlError.usage("missing_media", "announce needs \"media\": an http(s) URL or an absolute file path")
        }
        guard CastArguments.isMediaReference(media) else {
            throw ControlError.usage("bad_media", "announce: \"media\" must be an http(s) URL or an absolute file path, not \"\(media)\"")
        }
        self.media = media
        if let level = body.value("volume") {
            let text: String = switch level {
            case .int(let n): String(n)
            case .string(let s): s
            default: "\(level.serialized())"
            }
            let parsed = try ControlArguments.volume(text)
            guard !parsed.relative else { throw ControlError.usage("bad_volume", "announce: \"volume\" is the level to play at (0-100), not a change") }
            volume = parsed.percent
        }
        contentType = try body.string("content_type")
        if let seconds = try body.number("timeout") {
            guard seconds >= 1, seconds <= 3600 else { throw ControlError.usage("bad_timeout", "announce: \"timeout\" must be 1-3600 seconds") }
            timeout = seconds
        }
        wait = try body.bool("wait") ?? true
    }

    package var json: JSONValue {
        var o = JSONObject()
        o.set("media", .string(media))
        if let volume { o.set("volume", .int(Int64(volume))) }
        if let contentType { o.set("content_type", .string(contentType)) }
        if timeout != 120 { o.set("timeout", .double(timeout)) }
        if !wait { o.set("wait", .bool(false)) }
        return .object(o)
    }
}
