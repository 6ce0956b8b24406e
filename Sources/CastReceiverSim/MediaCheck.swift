import CastCore

/// A LOAD whose media the server fetches before the device answers, as a receiver loads the
/// media before it replies (``PlaybackTiming/checksLoopbackMedia``). The server reports the
/// outcome with ``ReceiverDevice/mediaChecked(mediaSessionID:failure:reason:now:)``.
public struct MediaCheckRequest: Sendable, Hashable {
    /// The media session that waits; a report for another one is stale and ignored.
    public var mediaSessionID: Int
    /// `contentUrl`, else `contentId`.
    public var url: String
    /// The LOAD's `contentType` (HLS and DASH manifests fail with codes of their own).
    public var contentType: String
    /// The `trackContentId` of each TEXT track: fetched too, as a receiver fetches its subtitles.
    public var textTracks: [String]

    public init(mediaSessionID: Int, url: String, contentType: String, textTracks: [String] = []) {
        self.mediaSessionID = mediaSessionID
        self.url = url
        self.contentType = contentType
        self.textTracks = textTracks
    }
}

/// Which media URLs a simulated device fetches.
public enum MediaURLPolicy {
    /// `http://` on a loopback host (`127.x.y.z`, `localhost`, `[::1]`): tests and demos never
    /// send traffic elsewhere, so media anywhere else is never fetched (and never fails).
    public static func isCheckable(_ url: String) -> Bool {
        guard url.count > 7, url.prefix(7).lowercased() == "http://" else { return false }
        return isLoopback(url)
    }

    /// Whether the URL's host is a loopback one (any scheme).
    public static func isLoopback(_ url: String) -> Bool {
        guard let schemeEnd = url.firstRange(of: "://") else { return false }
        let rest = url[schemeEnd.upperBound...]
        var host = Substring(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if host.hasPrefix("[") {
            return host.dropFirst().prefix { $0 != "]" } == "::1"
        }
        host = host.prefix { $0 != ":" }
        return host.lowercased() == "localhost" || host.hasPrefix("127.")
    }

    /// The URL a LOAD's media is fetched from: `contentUrl` when given, else `contentId`.
    static func url(of media: MediaInformation) -> String { media.contentURL ?? media.contentID }
}
