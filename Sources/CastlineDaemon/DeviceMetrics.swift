import CastlineJobs
import CastCore
import Synchronization

/// The per-device figures of `/metrics` that no other part keeps: each device's session
/// reconnects, its job launches by reason, and when castline last heard from it. Fed with the
/// hub's events (``note(_:)``) by the daemon's own subscription, and read at each scrape. Also
/// the pure mapping of a device's API object to its series (``series(device:…)``).
/// Thread-safe.
package final class DeviceMetrics: Sendable {
    package struct Counts: Sendable, Equatable {
        package var reconnects = 0
        /// Job casts by their cause (``JobStateMachine/CastCause``).
        package var launches: [String: Int] = [:]
        /// Unix seconds of the last sign of life: an event from the device, or a scrape that found
        /// its session connected.
        package var lastSeen: Double?
    }

    /// The states a device's `state` takes (the API's), each a series of 0 or 1.
    package static let mediaStates = ["NO_APP", "NO_MEDIA", "IDLE", "LOADING", "BUFFERING", "PLAYING", "PAUSED", "PAGE", "UNKNOWN"]
    /// Who owns what a device shows, each a series of 0 or 1.
    /// Who owns the screen (``ScreenOwner/Kind``, the views' `ownerKind`), each a series of 0 or 1.
    package static let ownerKinds = ScreenOwner.Kind.allCases.map(\.rawValue)

    /// What a screen shows (``ScreenReading``: visible, or the reason it is not; unknown), each a
    /// series of 0 or 1.
    package static let screenStates = ["visible"] + ScreenReading.Reason.allCases.map(\.rawValue) + ["unknown"]

    private let state = Mutex<[String: Counts]>([:])

    package init() {}

    /// One hub event. Session resumes count as reconnects; a job's `cast` is a launch (its
    /// reason: the cast's cause); media, device and session (re)starts mean the device spoke.
    package func note(kind: HubEvents.Kind, type: String, device: String?, fields: [String: JSONValue], time: Double) {
        guard let device else { return }
        state.withLock { all in
            var counts = all[device] ?? Counts()
            switch kind {
            case .session:
                if type == "didResume" { counts.reconnects += 1 }
                if type == "didResume" || type == "didStart" { counts.lastSeen = time }
            case .job:
                if type == "cast" { counts.launches[fields["cause"]?.string ?? "unknown", default: 0] += 1 }
            case .media, .device:
                if type != "lost" { counts.lastSeen = time }
            case .channel, .logging:
                break
            }
            all[device] = counts
        }
    }

    /// A scrape found the device's session connected at `time`.
    package func seen(_ device: String, at time: Double) {
        state.withLock { $0[device, default: Counts()].lastSeen = time }
    }

    package func counts(_ device: String) -> Counts { state.withLock { $0[device] ?? Counts() } }

}
