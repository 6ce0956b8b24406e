/// What `castline logs timeline` draws: per device ("lane"), the sessions with their state changes,
/// the requests sent and the failures seen, on one time axis. Times are Unix nanoseconds (UTC).
/// Plain values with no behaviour: the log reader builds one, `TimelineHTML.render` draws it.
package struct TimelineModel: Sendable, Equatable {
    package var title: String
    /// First and last instant covered by the logs (Unix ns). `end < start` is treated like `end == start`.
    package var start: Int64
    package var end: Int64
    package var lanes: [TimelineLane]
    /// Remarks about the input shown in the page header, e.g. "3 non-JSON lines skipped".
    package var notes: [String]

    package init(title: String, start: Int64, end: Int64, lanes: [TimelineLane] = [], notes: [String] = []) {
        self.title = title
        self.start = start
        self.end = end
        self.lanes = lanes
        self.notes = notes
    }
}

/// One device: its sessions, the requests sent to it and the failures seen talking to it.
package struct TimelineLane: Sendable, Equatable {
    package var deviceID: String
    package var deviceName: String
    /// The agent (site) whose records drew it (``LogEntry/agent``): lanes are grouped by it.
    package var site: String?
    package var sessions: [TimelineSession]
    package var requests: [TimelineRequest]
    package var failures: [TimelineFailure]
    /// What the screen showed (``DisplayTimeline``, transitions folded).
    package var content: [DisplayTimeline.Interval] = []
    /// What happened to it, with causes: app stops, takeovers and owner changes,
    /// announcements, page switches, plugin failures.
    package var story: [TimelineEvent] = []
    /// Requests its sessions' summaries counted (at info, with or without traffic records).
    package var summaryRequests = 0
    package var summaryFailedRequests = 0

    package init(deviceID: String, deviceName: String, sessions: [TimelineSession] = [],
                requests: [TimelineRequest] = [], failures: [TimelineFailure] = []) {
        self.deviceID = deviceID
        self.deviceName = deviceName
        self.sessions = sessions
        self.requests = requests
        self.failures = failures
    }
}

/// One session (app session id, or a local id when the app never reported one).
package struct TimelineSession: Sendable, Equatable {
    package var id: String
    package var appID: String?
    package var start: Int64
    /// nil: still open at the end of the log.
    package var end: Int64?
    /// Why it ended: "appStopped", "sessionGone", …; nil with an `end`: ended on request.
    package var endReason: String?
    /// In time order. The state before the first change is that change's `from`.
    package var states: [TimelineStateChange]
    /// The process that ran it (`daemon 812`, `cli 913`), when the records name one.
    package var process: String?

    package init(id: String, appID: String? = nil, start: Int64, end: Int64? = nil, endReason: String? = nil,
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
package struct TimelineStateChange: Sendable, Equatable {
    package var time: Int64
    package var from: String
    package var to: String
    package var reason: String?

    package init(time: Int64, from: String, to: String, reason: String? = nil) {
        self.time = time
        self.from = from
        self.to = to
        self.reason = reason
    }
}

/// One request sent to the device (LOAD, PLAY, GET_STATUS, …), stamped when it was sent.
package struct TimelineRequest: Sendable, Equatable {
    package var time: Int64
    package var type: String
    /// nil: no answer recorded.
    package var latencyMs: Double?
    package var failed: Bool
    package var error: String?

    package init(time: Int64, type: String, latencyMs: Double? = nil, failed: Bool = false, error: String? = nil) {
        self.time = time
        self.type = type
        self.latencyMs = latencyMs
        self.failed = failed
        self.error = error
    }
}

/// A failure logged for the device (connection lost, load failed, TLS error, …).
package struct TimelineFailure: Sendable, Equatable {
    package var time: Int64
    package var kind: String
    package var message: String

    package init(time: Int64, kind: String, message: String) {
        self.time = time
        self.kind = kind
        self.message = message
    }
}

/// One thing that happened to a screen, with its cause, for the timeline's story row.
package struct TimelineEvent: Sendable, Equatable {
    package enum Kind: String, Sendable, CaseIterable {
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

    package var time: Int64
    package var kind: Kind
    package var text: String

    package init(time: Int64, kind: Kind, text: String) {
        self.time = time
        self.kind = kind
        self.text = text
    }
}
