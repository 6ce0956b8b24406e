import CastCore
import CastLogging

/// What the simulated player does with matching media. The first matching rule wins; a rule
/// without globs matches everything. Value type.
public struct MediaRule: Sendable, Hashable {
    /// Glob (`*`, `?`, `[a-z]`, `[!…]`, `\x`) over `media.contentId`; also tried on
    /// `media.contentUrl` when present.
    public var contentIdGlob: String?
    /// Glob over `media.contentType` (e.g. `video/*`).
    public var contentTypeGlob: String?
    /// Reported as MEDIA_STATUS `status[].videoInfo`.
    public var videoInfo: VideoInfo?
    /// Duration in seconds when the LOAD did not give a positive `media.duration`.
    public var duration: Double?
    /// LOAD of matching media fails: LOAD_FAILED with this `detailedErrorCode`.
    public var loadError: DetailedErrorCode?

    public init(
        contentIdGlob: String? = nil, contentTypeGlob: String? = nil, videoInfo: VideoInfo? = nil,
        duration: Double? = nil, loadError: DetailedErrorCode? = nil
    ) {
        self.contentIdGlob = contentIdGlob
        self.contentTypeGlob = contentTypeGlob
        self.videoInfo = videoInfo
        self.duration = duration
        self.loadError = loadError
    }
}

/// Compiled ``MediaRule``s (globs via CastLogging's `GlobPattern`). A rule whose glob does not
/// compile never matches and is reported in ``invalidRules``. Value type.
struct MediaRuleSet: Sendable {
    struct Compiled: Sendable {
        var rule: MediaRule
        var contentID: GlobPattern?
        var contentType: GlobPattern?
    }

    private(set) var rules: [Compiled] = []
    /// Index and reason of rules that never match because a glob is invalid.
    private(set) var invalidRules: [(index: Int, reason: String)] = []

    init(_ rules: [MediaRule]) {
        for (index, rule) in rules.enumerated() {
            do throws(GlobSyntaxError) {
                let contentID = try rule.contentIdGlob.map { (text) throws(GlobSyntaxError) in try GlobPattern(text) }
                let contentType = try rule.contentTypeGlob.map { (text) throws(GlobSyntaxError) in try GlobPattern(text) }
                self.rules.append(Compiled(rule: rule, contentID: contentID, contentType: contentType))
            } catch {
                invalidRules.append((index, "\(error)"))
            }
        }
    }

    /// The first rule matching `media`, if any.
    func match(_ media: MediaInformation) -> MediaRule? {
        for compiled in rules {
            if let pattern = compiled.contentID {
                let byURL = media.contentURL.map { pattern.matches($0) } ?? false
                guard pattern.matches(media.contentID) || byURL else { continue }
            }
            if let pattern = compiled.contentType, !pattern.matches(media.contentType) { continue }
            return compiled.rule
        }
        return nil
    }
}
