import CastCore

/// What the screen of a simulated device shows, as a person in the room would see it: the
/// truth a sender's view of the screen is judged against (`list`'s `screen`). Value type.
public struct ScreenState: Sendable, Hashable {
    public enum Shows: String, Sendable, Hashable {
        /// The running app (a page, a player).
        case app
        /// Ambient mode, a screensaver, a photo frame or the idle screen (Backdrop): no app, or
        /// one covered.
        case ambient
        /// The TV is in standby.
        case off
        /// The TV shows another HDMI input.
        case otherInput = "other-input"
    }

    public var shows: Shows
    /// The running app is what the screen shows.
    public var appVisible: Bool
    /// What covers the app (`"ambient"`: the profile's ambient mode, `"control"`: the control
    /// socket's `cover`); nil when nothing does.
    public var coveredBy: String?

    public init(shows: Shows, appVisible: Bool, coveredBy: String? = nil) {
        self.shows = shows
        self.appVisible = appVisible
        self.coveredBy = coveredBy
    }

    public var json: JSONValue {
        var object: JSONObject = ["shows": .string(shows.rawValue), "app_visible": .bool(appVisible)]
        object.set("covered_by", coveredBy.map { .string($0) } ?? .null)
        return .object(object)
    }
}

/// The screen's own switches, set by the control socket and the profile (a TV's power and input,
/// a cover). Value type, part of ``ReceiverDevice``.
struct ScreenSwitches: Sendable, Equatable {
    /// The TV is in standby (`standby`).
    var standby = false
    /// The TV shows another HDMI input (`input`).
    var otherInput = false
    /// What covers a running app; nil: nothing.
    var coveredBy: String?
    /// The last moment something kept ambient mode away: a launch, media playing, an uncover.
    var lastWake: Double = 0
}
