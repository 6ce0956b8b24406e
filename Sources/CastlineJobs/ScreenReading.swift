import CastCore
import CastSender

/// Whether a device's screen shows its app, as far as castline can tell, and how it knows:
/// from what the device reports (`isStandBy`, `isActiveInput`, the idle screen), or from its
/// model's profile (ambient mode that covers a page after a time without media, which no device
/// reports on the wire). Where neither says (a TV or hub that reports no HDMI-CEC fields),
/// `visible` is nil: castline does not know. Value type; ``read(_:)`` is pure.
package struct ScreenReading: Sendable, Equatable {
    package enum Reason: String, Sendable, CaseIterable {
        case covered
        case standby
        case otherInput = "other-input"
        case idleScreen = "idle-screen"
    }

    package enum Source: String, Sendable {
        case device
        case profile
    }

    package var visible: Bool?
    package var reason: Reason?
    package var source: Source?

    package init(visible: Bool?, reason: Reason? = nil, source: Source? = nil) {
        self.visible = visible
        self.reason = reason
        self.source = source
    }

    package static let unknown = ScreenReading(visible: nil)

    /// What the reading is made from.
    package struct Inputs: Sendable {
        package var connected: Bool
        package var status: CastDeviceStatus?
        /// The app the device runs (not the idle screen), and since when (monotonic seconds).
        package var app: ApplicationInfo?
        package var appSince: Double?
        /// Media plays (or buffers) now, and when it last did.
        package var mediaPlaying: Bool
        package var lastPlayed: Double?
        package var profile: FieldProfile?
        package var now: Double

        package init(connected: Bool, status: CastDeviceStatus?, app: ApplicationInfo?, appSince: Double?, mediaPlaying: Bool,
                     lastPlayed: Double?, profile: FieldProfile?, now: Double) {
            self.connected = connected
            self.status = status
            self.app = app
            self.appSince = appSince
            self.mediaPlaying = mediaPlaying
            self.lastPlayed = lastPlayed
            self.profile = profile
            self.now = now
        }
    }

    /// When ambient mode will cover the running app, by the profile (nil: it will not, or it has).
    package static func coverDeadline(_ inputs: Inputs) -> Double? {
        guard let ambient = inputs.profile?.ambient, ambient.coversApp, inputs.app != nil, !inputs.mediaPlaying,
              let since = inputs.appSince else { return nil }
        return max(since, inputs.lastPlayed ?? since) + max(0, ambient.after)
    }

    package static func read(_ inputs: Inputs) -> ScreenReading {
        guard inputs.connected else { return .unknown }
        if inputs.status?.isStandBy == true { return ScreenReading(visible: false, reason: .standby, source: .device) }
        guard inputs.app != nil else {
            // No app: the idle screen (Backdrop, ambient) is what shows (a TV reports
            // isActiveInput false then too: the idle screen does not take the input).
            return ScreenReading(visible: false, reason: .idleScreen, source: .device)
        }
        if inputs.status?.isActiveInput == false { return ScreenReading(visible: false, reason: .otherInput, source: .device) }
        if let deadline = coverDeadline(inputs), inputs.now >= deadline {
            return ScreenReading(visible: false, reason: .covered, source: .profile)
        }
        if inputs.status?.isStandBy == false, inputs.status?.isActiveInput != false { return ScreenReading(visible: true, source: .device) }
        // No CEC fields: a TV may be off or on another input, a hub's screen asleep; nothing says.
        return .unknown
    }

    package var json: JSONValue {
        ["visible": visible.map { .bool($0) } ?? .null, "reason": reason.map { .string($0.rawValue) } ?? .null,
         "source": source.map { .string($0.rawValue) } ?? .null]
    }

    /// For `status`: `shows the app`, `covered (ambient mode, by the model's profile)`, `unknown`.
    package var text: String {
        guard let visible else { return "unknown (the device does not report it)" }
        if visible { return "shows the app" }
        let why: String
        switch reason {
        case .covered?: why = "covered: ambient mode, by the model's profile"
        case .standby?: why = "off: the TV is in standby"
        case .otherInput?: why = "another input shows"
        case .idleScreen?: why = "the idle screen: no app runs"
        case nil: why = "not shown"
        }
        return why
    }
}
