import CastCore
import CastLogging
import CastNearby

/// What one job is doing on one device, as `castline run` announces it to nearby hosts.
package struct JobAnnouncement: Hashable, Sendable {
    package static let messageType = "castline.job"

    package var host: String
    package var job: String
    package var device: String
    package var state: String
    package var title: String?
    package var url: String

    package init(host: String, job: String, device: String, state: String, title: String?, url: String) {
        self.host = host
        self.job = job
        self.device = device
        self.state = state
        self.title = title
        self.url = url
    }

    /// `{"host","job","device","state","title","url"}` (the URL left out when the whole would not
    /// fit one nearby message).
    package func message(namespace: String) -> NearbyMessage {
        var object: JSONObject = ["host": .string(host), "job": .string(job), "device": .string(device), "state": .string(state)]
        if let title { object.set("title", .string(title)) }
        object.set("url", .string(url))
        var text = JSONValue.object(object).serialized()
        if text.utf8.count > NearbyMessage.maxContentBytes {
            object.set("url", .null)
            text = JSONValue.object(object).serialized()
        }
        return NearbyMessage(namespace: namespace, type: Self.messageType, text: text)
    }
}

/// Keeps one nearby publication per (job, device) matching the daemon's current job states:
/// publishes new ones, replaces those whose state changed (subscribers see the old one lost and
/// the new one found), withdraws the rest. Without the nearby permission it publishes nothing and
/// says so once; it catches up on the first update after the permission is granted.
package final class NearbyJobAnnouncer: @unchecked Sendable {
    private let manager: NearbyMessagesManager
    private let namespace: String
    private let strategy: NearbyStrategy
    private let log: Logger
    private var active: [String: (message: NearbyMessage, publication: NearbyPublication)] = [:]
    private var lastProblem: String?

    /// `medium`: mdns for the daemon; loopback in tests.
    package init(manager: NearbyMessagesManager, namespace: String, logSystem: LogSystem, medium: NearbyMediumKind = .mdns) {
        self.manager = manager
        self.namespace = namespace
        strategy = NearbyStrategy(discoveryMode: .publish, medium: medium)
        log = Logger(class: "NearbyJobAnnouncer", system: logSystem)
    }

    /// The publications now (job/device → message), for tests and logs.
    package var published: [String: NearbyMessage] { active.mapValues(\.message) }

    /// Makes the publications match `announcements`. Call from one task at a time.
    package func update(_ announcements: [JobAnnouncement]) {
        var wanted: [String: NearbyMessage] = [:]
        for a in announcements { wanted["\(a.job)/\(a.device)"] = a.message(namespace: namespace) }
        for (key, entry) in active where wanted[key] != entry.message {
            entry.publication.cancel()
            active.removeValue(forKey: key)
        }
        var problem: String?
        for key in wanted.keys.sorted() where active[key] == nil {
            let message = wanted[key]!
            do {
                active[key] = (message, try manager.publish(message, strategy: strategy))
                log.debug("announcing \(key): \(message.text ?? "")")
            } catch {
                problem = error.description
            }
        }
        if problem != lastProblem {
            if let problem { log.warning("job announcements are not published: \(problem)") } else if lastProblem != nil {
                log.info("job announcements are published again")
            }
            lastProblem = problem
        }
    }

    /// Withdraws every announcement.
    package func stop() {
        for entry in active.values { entry.publication.cancel() }
        active = [:]
    }
}
