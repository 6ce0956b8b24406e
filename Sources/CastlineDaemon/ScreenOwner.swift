/// Who owns a TV's screen now, derived from what the device reports (its app, its media) and
/// what castline itself told it to load (the registry's claim). One answer for every view: the
/// API's `owner`/`ownerKind`, `/v1/events` and MQTT. Pure.
///
/// - `job`, `command`, `announcement`: castline's claim, from the cast until what it loaded has
///   played and then ended or given way (an announcement's, until it gives the device back);
/// - `other`: an app runs that castline did not put there (another sender);
/// - `nobody`: no app runs (an idle screen or backdrop counts as none);
/// - `unknown`: the device cannot be seen now (its link is down).
package struct ScreenOwner: Sendable, Equatable, CustomStringConvertible {
    package enum Kind: String, Sendable, CaseIterable {
        case job, command, announcement, other, nobody, unknown
    }

    package let kind: Kind
    /// The job's name (job), else nil.
    package let job: String?

    package init(kind: Kind, job: String? = nil) {
        self.kind = kind
        self.job = job
    }

    /// The owner from the registry's view: `connected`, the claim (a job's name or a
    /// ``CommandOwner`` name) and the app that runs (its id; nil: none).
    package static func derive(connected: Bool, claim: String?, appID: String?) -> ScreenOwner {
        guard connected else { return ScreenOwner(kind: .unknown) }
        switch claim {
        case CommandOwner.name?: return ScreenOwner(kind: .command)
        case CommandOwner.announcement?: return ScreenOwner(kind: .announcement)
        case let job?: return ScreenOwner(kind: .job, job: job)
        case nil: return ScreenOwner(kind: appID == nil ? .nobody : .other)
        }
    }

    /// The API's `owner`: the job's name, or the kind (nil for nobody).
    package var name: String? {
        switch kind {
        case .job: return job
        case .nobody: return nil
        default: return kind.rawValue
        }
    }

    package var description: String {
        switch kind {
        case .job: return "job \(job ?? "?")"
        case .command: return "a command"
        case .announcement: return "an announcement"
        case .other: return "another sender"
        case .nobody: return "nobody"
        case .unknown: return "unknown"
        }
    }

    /// Why the screen is this owner's now, in words for the event and the log.
    package func reason(appID: String?) -> String {
        switch kind {
        case .job: return "castline cast it for job \(job ?? "?")"
        case .command: return "a command (API, CLI, MQTT) cast it"
        case .announcement: return "an announcement plays"
        case .other: return "another sender's app runs" + (appID.map { " (\($0))" } ?? "")
        case .nobody: return "no app runs"
        case .unknown: return "the device cannot be reached"
        }
    }
}
