/// What `castline logs timeline` draws: per device ("lane"), the sessions with their state changes,
/// the requests sent and the failures seen, on one time axis. Times are Unix nanoseconds (UTC).
/// Plain values with no behaviour: the log reader builds one, `TimelineHTML.render` draws it.
public struct TimelineModel: Sendable, Equatable {
    public var title: String
    /// First and last instant covered by the logs (Unix ns). `end < start` is treated like `end == start`.
    public var start: Int64
    public var end: Int64
    public var lanes: [TimelineLane]
    /// Remarks about the input shown in the page header, e.g. "3 non-JSON lines skipped".
    public var notes: [String]

    public init(title: String, start: Int64, end: Int64, lanes: [TimelineLane] = [], notes: [String] = []) {
        self.title = title
        self.start = start
        self.end = end
        self.lanes = lanes
        self.notes = notes
    }
}

/// One device: its sessions, the requests sent to it and the failures seen talking to it.
public struct TimelineLane: Sendable, Equatable {
    public var deviceID: String
    public var deviceName: String
    /// The agent (site) whose records drew it (``LogEntry/agent``): lanes are grouped by it.
    public var site: String?
    public var sessions: [TimelineSession]
    public var requests: [TimelineRequest]
    public var failures: [TimelineFailure]
    /// What the screen showed (``DisplayTimeline``, transitions folded).
    public var content: [DisplayTimeline.Interval] = []
    /// What happened to it, with causes: app stops, takeovers and owner changes,
    /// announcements, page switches, plugin failures.
    public var story: [TimelineEvent] = []
    /// Requests its sessions' summaries counted (at info, with or without traffic records).
    public var summaryRequests = 0
    public var summaryFailedRequests = 0

    public init(deviceID: String, deviceName: String, sessions: [TimelineSession] = [],
                requests: [TimelineRequest] = [], failures: [TimelineFailure] = []) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.sessions = sessions
        self.requests = requests
        self.failures = failures
    }
}

/// One session (app session id, or a local id when the app never reported one).
public struct TimelineSession: Sendable, Equatable {
    public var id: String
    public var appID: String?
    public var start: Int64
    /// nil: still open at the end of the log.
    public var end: Int64?
    /// Why it ended: "appStopped", "sessionGone", …; nil with an `end`: ended on request.
    public var endReason: String?
    /// In time order. The state before the first change is that change's `from`.
    public var states: [TimelineStateChange]
    /// The process that ran it (`daemon 812`, `cli 913`), when the records name one.
    public var process: String?

    public init(id: String, appID: String? = nil, start: Int64, end: Int64? = nil, endReason: String? = nil,
                states: [TimelineStateChange] = []) {
        self.id = id
        self.appID = appID
        self.start = start
        self.end = end
        self.endReason = endReason
        self.states = states
    }
}

/// A session state change: connecting, connected, suspended, resuming, ending, ended, failed.
public struct TimelineStateChange: Sendable, Equatable {
    public var time: Int64
    public var from: String
    public var to: String
    public var reason: String?

    public init(time: Int64, from: String, to: String, reason: String? = nil) {
        self.time = time
        self.from = from
        self.to = to
        self.reason = reason
    }
}

/// One request sent to the device (LOAD, PLAY, GET_STATUS, …), stamped when it was sent.
public struct TimelineRequest: Sendable, Equatable {
    public var time: Int64
    public var type: String
    /// nil: no answer recorded.
    public var latencyMs: Double?
    public var failed: Bool
    public var error: String?

    public init(time: Int64, type: String, latencyMs: Double? = nil, failed: Bool = false, error: String? = nil) {
        self.time = time
        self.type = type
        self.latencyMs = latencyMs
        self.failed = failed
        self.error = error
    }
}

/// A failure logged for the device (connection lost, load failed, TLS error, …).
public struct TimelineFailure: Sendable, Equatable {
    public var time: Int64
    public var kind: String
    public var message: String

    public init(time: Int64, kind: String, message: String) {
        self.time = time
        self.kind = kind
        self.message = message
    }
}

/// One thing that happened to a screen, with its cause, for the timeline's story row.
public struct TimelineEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// An app stopped (with who or what stopped it) or was replaced.
        case app
        /// Another sender took the screen.
        case takeover
        /// The screen's owner changed otherwise (a job, a command, nobody).
        case owner
        case announcement
        /// A page job's page shown or gone (a reload, a schedule entry).
        case page
        /// A plugin failed on this device.
        case plugin
        /// The media or page server behind the device's content is down (`ServerProbe`).
        case server
    }

    public var time: Int64
    public var kind: Kind
    public var text: String

    public init(time: Int64, kind: Kind, text: String) {
        self.time = time
        self.kind = kind
        self.text = text
    }
}
