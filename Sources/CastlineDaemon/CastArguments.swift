import CastlineJobs
import CastlineLocalMedia
import CastCore
import CastHTTP
import CastSender
import CastlineConfig

/// What to cast and how: `castline cast`'s argument and options, in the same names for the API
/// and MQTT (`{"media": "http://…/a.mp4", "title": "…", "content_type": "video/mp4"}`).
package struct CastArguments: Sendable, Equatable {
    /// An http(s) URL, or an absolute path the daemon serves.
    package var media: String
    /// Which local files this cast may serve when not the control plane's (``MediaPublisher/policy``):
    /// set by castline itself for a config job's announcement, never from a request.
    package var localMedia: LocalMediaPolicy?
    package var title: String?
    package var subtitle: String?
    package var studio: String?
    package var image: String?
    package var contentType: String?
    package var streamType: StreamType?
    /// The receiver app (default: the config's `receiver_app_id`).
    package var app: String?
    /// Seconds into the media.
    package var start: Double?
    package var noAutoplay = false
    /// Seconds to wait for PLAYING (PAUSED with `noAutoplay`).
    package var playTimeout = 30.0
    /// Items that play after `media`, as one queue.
    package var queue: [String] = []
    /// A queue's repeat mode: off, all, single or shuffle (nil: off).
    package var repeatMode: String?
    /// Only report what would be loaded and how (play as is, remux, transcode, refuse).
    package var dryRun = false
    /// `--subtitles`: a subtitle file (SRT, ASS/SSA, WebVTT) or `auto` (next to the file, else embedded).
    package var subtitles: String?

    /// A queue (several items, a folder, an M3U file, or a repeat mode), not one media.
    package var isQueue: Bool {
        !queue.isEmpty || repeatMode != nil || media.lowercased().hasSuffix(".m3u") || Playlist.isPlaylistPath(media)
    }

    package init(media: String) { self.media = media }

    /// The body's keys: the cast route's fields (``ControlRoute/cast``).
    package static var keys: [String] { ControlAction.cast.route.body.fieldNames }

    /// From a request body; every problem is a usage error naming the key.
    package init(json: JSONValue) throws(ControlError) {
        let body = try ArgumentObject(json, action: .cast)
        guard let media = try body.string("media"), !media.isEmpty else {
            throw ControlError.usage("missing_media", "cast needs \"media\": an http(s) URL or an absolute file path")
        }
        guard Self.isMediaReference(media) else {
            throw ControlError.usage("bad_media", "cast: \"media\" must be an http(s) URL or an absolute file path, not \"\(media)\"")
        }
        self.media = media
        title = try body.string("title")
        subtitle = try body.string("subtitle")
        studio = try body.string("studio")
        image = try body.string("image")
        contentType = try body.string("content_type")
        if let text = try body.string("stream_type") {
            guard let type = StreamType.named(text) else {
                throw ControlError.usage("bad_stream_type", "cast: \"stream_type\" must be buffered, live or none, not \"\(text)\"")
            }
            streamType = type
        }
        if let app = try body.string("app") {
            guard !app.isEmpty, app.utf8.count <= 32, app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw ControlError.usage("bad_app", "cast: \"app\" must be an app id such as CC1AD845, not \"\(app)\"")
            }
            self.app = app
        }
        if let start = try body.number("start") {
            guard start >= 0, start <= 86_400 * 366 else { throw ControlError.usage("bad_start", "cast: \"start\" must be 0 or more seconds") }
            self.start = start
        }
        noAutoplay = try body.bool("no_autoplay") ?? false
        dryRun = try body.bool("dry_run") ?? false
        if let subtitles = try body.string("subtitles") {
            guard subtitles == "auto" || subtitles.hasPrefix("/") else {
                throw ControlError.usage("bad_subtitles", "cast: \"subtitles\" must be \"auto\" or an absolute file path, not \"\(subtitles)\"")
            }
            self.subtitles = subtitles
        }
        for item in try body.strings("queue") ?? [] {
            guard Self.isMediaReference(item) else {
                throw ControlError.usage("bad_media", "cast: each of \"queue\" must be an http(s) URL or an absolute file path, not \"\(item)\"")
            }
            queue.append(item)
        }
        if let mode = try body.string("repeat") {
            guard ["off", "all", "single", "shuffle"].contains(mode) else {
                throw ControlError.usage("bad_repeat", "cast: \"repeat\" must be off, all, single or shuffle, not \"\(mode)\"")
            }
            repeatMode = mode
        }
        if let timeout = try body.number("play_timeout") {
            guard timeout >= 1, timeout <= 3600 else { throw ControlError.usage("bad_play_timeout", "cast: \"play_timeout\" must be 1-3600 seconds") }
            playTimeout = timeout
        }
    }

    /// An http(s) URL with a host (and a valid port), or an absolute file path.
    package static func isMediaReference(_ text: String) -> Bool {
        if text.hasPrefix("/") { return true }
        let lower = text.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return false }
        return text.utf8.count > 9 && !text.contains(" ") && HTTPURL(text) != nil
    }

    /// The body that makes these arguments again (what the CLI sends).
    package var json: JSONValue {
        var o = JSONObject()
        o.set("media", .string(media))
        if let title { o.set("title", .string(title)) }
        if let subtitle { o.set("subtitle", .string(subtitle)) }
        if let studio { o.set("studio", .string(studio)) }
        if let image { o.set("image", .string(image)) }
        if let contentType { o.set("content_type", .string(contentType)) }
        if let streamType { o.set("stream_type", .string(streamType.rawValue.lowercased())) }
        if let app { o.set("app", .string(app)) }
        if let start { o.set("start", .double(start)) }
        if noAutoplay { o.set("no_autoplay", .bool(true)) }
        if dryRun { o.set("dry_run", .bool(true)) }
        if let subtitles { o.set("subtitles", .string(subtitles)) }
        if playTimeout != 30 { o.set("play_timeout", .double(playTimeout)) }
        if !queue.isEmpty { o.set("queue", .array(queue.map { .string($0) })) }
        if let repeatMode { o.set("repeat", .string(repeatMode)) }
        return .object(o)
    }

    /// The LOAD's media: the URL (the served one for a file), its type, the media-format probe's
    /// findings (stream type, 4K/HDR), and the title (the file or URL's last part when none).
    package func mediaInformation(url: String, contentType type: String, format: MediaFormatInfo?) -> MediaInformation {
        var builder = MediaInformationBuilder(contentURL: url).contentType(type)
        if let streamType { builder = builder.streamType(streamType) }
        if let format { builder = builder.applying(format) }
        // The file's length from its container: the device's progress bar, and a transcode's
        // HLS playlist (an EVENT one, still growing) has none of its own.
        if let duration = format?.duration, duration > 0, streamType != .live { builder = builder.duration(duration) }
        let fallbackTitle = String(media.split(separator: "/").last ?? Substring(media))
        if studio != nil {
            builder = builder.movie(title: title ?? fallbackTitle, subtitle: subtitle, studio: studio)
        } else {
            builder = builder.generic(title: title ?? fallbackTitle, subtitle: subtitle)
        }
        if let image { builder = builder.image(image) }
        // The builder only fails for a missing content id or type, both set above.
        return (try? builder.build()) ?? MediaInformation(contentID: url, contentURL: url, contentType: type)
    }
}

extension StreamType {
    /// `buffered`, `live` or `none`, any case.
    package static func named(_ text: String) -> StreamType? {
        switch text.lowercased() {
        case "buffered": return .buffered
        case "live": return .live
        case "none": return StreamType.none
        default: return nil
        }
    }
}

/// A request body as an object with known keys: an unknown key, or a value of the wrong type, is
/// a usage error that names it (and the key meant, for a typo).
package struct ArgumentObject: Sendable {
    let object: JSONObject
    let what: String

    /// `nullable`: keys whose value may be `null` (for the others `null` is a wrong type).
    package init(_ json: JSONValue, allowed: [String], nullable: Set<String> = [], what: String) throws(ControlError) {
        guard case .object(let object) = json else {
            throw ControlError.usage("body_not_object", "\(what): the request body must be a JSON object")
        }
        for key in object.keys where !allowed.contains(key) {
            var message = "\(what): unknown key \"\(key)\""
            if let near = ConfigReader.closest(to: key, in: allowed) { message += " (did you mean \"\(near)\"?)" }
            message += allowed.isEmpty ? "; it takes no keys" : "; allowed: " + allowed.joined(separator: ", ")
            throw ControlError.usage("unknown_key", message)
        }
        for key in object.keys where object[key] == .null && !nullable.contains(key) {
            throw ControlError.usage("bad_type", "\(what): \"\(key)\" must not be null (leave it out instead)")
        }
        self.object = object
        self.what = what
    }

    package func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    package func string(_ key: String) throws(ControlError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw wrongType(key, "a string") }
        return text
    }

    package func number(_ key: String) throws(ControlError) -> Double? {
        switch value(key) {
        case nil: return nil
        case .int(let n)?: return Double(n)
        case .double(let d)? where d.isFinite: return d
        default: throw wrongType(key, "a number")
        }
    }

    package func bool(_ key: String) throws(ControlError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw wrongType(key, "true or false") }
        return flag
    }

    package func strings(_ key: String) throws(ControlError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard case .array(let items) = value else { throw wrongType(key, "a list of strings") }
        var result: [String] = []
        for item in items {
            switch item {
            case .string(let text): result.append(text)
            case .int(let n): result.append(String(n))
            default: throw wrongType(key, "a list of strings")
            }
        }
        return result
    }

    func wrongType(_ key: String, _ expected: String) -> ControlError {
        ControlError.usage("bad_type", "\(what): \"\(key)\" must be \(expected)")
    }
}
