import CastCore
import CastSender
import CastlineConfig

/// Conversions between a job's media entry, the sender's types and the machine's inputs. Pure.
package enum JobMedia {
    package static func information(_ media: MediaEntry, url: String) -> MediaInformation {
        var builder = MediaInformationBuilder(contentURL: url)
            .contentType(media.contentType ?? ContentTypeGuess.forPath(url) ?? "application/octet-stream")
        switch media.streamType {
        case .live?: builder = builder.streamType(.live)
        case MediaEntry.StreamType.none?: builder = builder.streamType(StreamType.none)
        case .buffered?: builder = builder.streamType(.buffered)
        case nil: break
        }
        let title = media.title ?? fileName(media.url)
        builder = media.studio != nil
            ? builder.movie(title: title, subtitle: media.subtitle, studio: media.studio)
            : builder.generic(title: title, subtitle: media.subtitle)
        if let image = media.image { builder = builder.image(image) }
        return (try? builder.build()) ?? MediaInformation(contentID: url, contentURL: url, contentType: "application/octet-stream")
    }

    package static func fileName(_ path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    package static func observation(_ status: MediaStatus, urls: [String], heldByCommand: Bool = false) -> JobStateMachine.MediaObservation {
        let media = status.effectiveMedia
        let ours = media.map { m in urls.contains(m.contentID) || (m.contentURL.map { urls.contains($0) } ?? false) } ?? true
        return JobStateMachine.MediaObservation(playerState: status.playerState.rawValue, idleReason: status.idleReason?.rawValue,
                                                isOurs: ours, heldByCommand: heldByCommand)
    }
}

/// Content types for the common extensions (jobs without `content_type`; `cast` asks the
/// media-formats plugin instead).
package enum ContentTypeGuess {
    package static func forPath(_ path: String) -> String? {
        let name = path.split(separator: "?").first.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "mp4", "m4v": return "video/mp4"
        case "webm": return "video/webm"
        case "mkv": return "video/x-matroska"
        case "m3u8": return "application/x-mpegURL"
        case "mpd": return "application/dash+xml"
        case "mp3": return "audio/mpeg"
        case "m4a", "aac": return "audio/mp4"
        case "ogg", "oga": return "audio/ogg"
        case "flac": return "audio/flac"
        case "wav": return "audio/wav"
        case "jpg", "jpeg": return "image/jpeg"
        case "png": return "image/png"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "html", "htm": return "text/html"
        default: return nil
        }
    }
}
