import CastCore
import CastProtocol

/// What `castline sim --replay` answers with, read from a `castline capture` file. Pure: the
/// server asks it, per sender connection, what to send for each request.
///
/// Every request the capturing sender sent (outside the transport namespaces and the connection
/// namespace, which the standard model handles) is an entry keyed by namespace, type and body
/// (its `requestId`, `sessionId`, `mediaSessionId` and `transportId` left out). What the device
/// sent with that request's `requestId` is its answer; what it sent unsolicited (`requestId` 0
/// or none: the statuses other senders caused) follows the entry it came after. Each keeps its
/// delay from the request. Value type.
public struct ReplayScript: Sendable, Equatable {
    /// The recorded device: the capture's `device`, `txt` and `eurekaInfo`.
    public struct Identity: Sendable, Equatable {
        public var id: String
        public var name: String
        public var model: String
        public var txt: [String: String]
        public var eurekaInfo: JSONValue?
        /// The TXT keys in the order the capture lists them.
        public var txtOrder: [String] = []
        /// The capture's `txt` is the device's whole record (`"txtComplete": true`), not the few
        /// keys discovery passed on: replayed exactly, without the simulator's own keys.
        public var txtComplete = false
    }

    /// One message to send: after `delay` seconds (from the request), from `source`.
    public struct Reply: Sendable, Equatable {
        public var delay: Double
        public var source: String
        public var namespace: CastNamespace
        public var payload: JSONValue
        /// The answer to the request (its `requestId` is rewritten), not an unsolicited status.
        public var isAnswer: Bool
        /// Not a message: the recorded connection closed here (a drop), so the replay closes it.
        public var closesConnection = false
    }

    struct Entry: Sendable, Equatable {
        var namespace: String
        var type: String
        var body: JSONValue
        var requestID: Int64?
        var offset: Double
        var replies: [Reply] = []
    }

    public let identity: Identity
    let entries: [Entry]

    /// Request types answered from the recording whatever their body (status queries): other
    /// requests must match the recorded body too.
    static let bodyFreeTypes: Set<String> = ["GET_STATUS", "GET_CASTING_GROUPS", "GET_DEVICE_INFO"]
    static let volatileKeys: Set<String> = ["requestId", "sessionId", "mediaSessionId", "transportId"]
    /// Namespaces the server or the standard model always handle themselves.
    public static let modelNamespaces: Set<String> = [
        CastNamespace.heartbeat.rawValue, CastNamespace.deviceAuth.rawValue, CastNamespace.connection.rawValue,
    ]

    /// Reads a capture (JSON lines). Throws on a file without its `capture` line or with a line
    /// that is not JSON (the line number says which); frames it cannot use are skipped.
    public init(captureText: String) throws(ReplayScriptError) {
        var identity: Identity?
        var entries: [Entry] = []
        // The capturing sender closed receiver-0 itself: the connection's end that follows is the
        // capture ending, not a drop.
        var senderClosed = false
        for (index, line) in captureText.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.allSatisfy(\.isWhitespace) { continue }
            guard let record = try? JSONValue.parse(String(line)), record.object != nil else {
                throw ReplayScriptError(description: "line \(index + 1) is not a JSON object")
            }
            switch record["event"]?.string {
            case "capture":
                identity = Self.identity(record)
            case "frame":
                Self.add(frame: record, to: &entries)
                if record["direction"]?.string == "out", record["namespace"]?.string == CastNamespace.connection.rawValue {
                    senderClosed = record["type"]?.string == "CLOSE" && record["destination"]?.string == "receiver-0"
                }
            case "closed":
                if senderClosed {
                    senderClosed = false
                } else if let offset = record["offset"]?.double, let last = entries.indices.last {
                    entries[last].replies.append(Reply(delay: max(0, offset - entries[last].offset), source: "receiver-0",
                                                       namespace: .connection, payload: .null, isAnswer: false, closesConnection: true))
                }
            default:
                continue
            }
        }
        guard let identity else { throw ReplayScriptError(description: "no \"capture\" line: not a castline capture") }
        self.identity = identity
        self.entries = entries
    }

    static func identity(_ record: JSONValue) -> Identity {
        let device = record["device"]
        var txt: [String: String] = [:]
        var order: [String] = []
        if case .object(let object)? = record["txt"] {
            for (key, value) in object {
                guard let text = value.string, txt[key] == nil else { continue }
                txt[key] = text
                order.append(key)
            }
        }
        let eureka = record["eurekaInfo"].flatMap { $0.isNull ? nil : $0 }
        return Identity(id: device?["id"]?.string ?? txt["id"] ?? "", name: device?["name"]?.string ?? txt["fn"] ?? "castline replay",
                        model: device?["model"]?.string ?? txt["md"] ?? "", txt: txt, eurekaInfo: eureka, txtOrder: order,
                        txtComplete: record["txtComplete"]?.bool ?? false)
    }

    private static func add(frame: JSONValue, to entries: inout [Entry]) {
        guard let namespace = frame["namespace"]?.string, let payload = frame["payload"], payload.object != nil,
              let offset = frame["offset"]?.double, !(namespace == CastNamespace.heartbeat.rawValue || namespace == CastNamespace.deviceAuth.rawValue)
        else { return }
        let requestID = frame["requestId"]?.int
        if frame["direction"]?.string == "out" {
            guard !modelNamespaces.contains(namespace), let type = frame["type"]?.string else { return }
            entries.append(Entry(namespace: namespace, type: type, body: normalized(payload), requestID: requestID, offset: offset))
            return
        }
        guard !entries.isEmpty else { return }
        var target = entries.count - 1
        var isAnswer = false
        if let requestID, requestID != 0, let index = entries.lastIndex(where: { $0.requestID == requestID && $0.namespace == namespace }) {
            target = index
            isAnswer = true
        }
        let reply = Reply(delay: max(0, offset - entries[target].offset), source: frame["source"]?.string ?? "receiver-0",
                          namespace: CastNamespace(rawValue: namespace), payload: payload, isAnswer: isAnswer)
        entries[target].replies.append(reply)
    }

    /// A request body without what changes from run to run.
    static func normalized(_ body: JSONValue) -> JSONValue {
        guard case .object(let object) = body else { return body }
        var out = JSONObject()
        for (key, value) in object where !volatileKeys.contains(key) { out.append(key: key, value: value) }
        return .object(out)
    }

    /// Requests a recording answers.
    public var recordedRequestCount: Int { entries.count }

    /// What to send for `request`, at `now` (seconds, any monotonic clock), on a connection whose
    /// replay so far is `cursor`: nil when the recording has no such request (the standard model
    /// answers). The first unused matching entry gives its answer and unsolicited statuses.
    /// Once all are used, a status query is answered with the newest status of the answer's
    /// type this connection has been sent by now (what the recorded device shows at this point
    /// of the replay); other requests get the last entry's answer alone.
    public func replies(to request: CastMessage, now: Double, cursor: inout ReplayCursor) -> [ReplayOutput]? {
        guard !Self.modelNamespaces.contains(request.namespace.rawValue), let text = request.payload.text,
              let json = try? JSONValue.parse(text), let type = json["type"]?.string else { return nil }
        let body = Self.normalized(json)
        let bodyFree = Self.bodyFreeTypes.contains(type)
        let matching = entries.indices.filter { i in
            entries[i].namespace == request.namespace.rawValue && entries[i].type == type && (bodyFree || entries[i].body == body)
        }
        guard let last = matching.last else { return nil }
        let unused = matching.first { !cursor.used.contains($0) }
        let chosen = unused ?? last
        let requestID = json["requestId"]?.int ?? 0
        var replies = entries[chosen].replies
        if unused == nil {
            replies = replies.filter { $0.isAnswer }
            if bodyFree, let answer = replies.first, let current = currentStatus(like: answer, now: now, cursor: cursor) {
                replies = [current]
            }
        } else {
            cursor.used.insert(chosen)
            cursor.startedAt[chosen] = now
        }
        return replies.map { reply in
            var payload = reply.payload
            if reply.isAnswer, case .object(var object) = payload {
                object.set("requestId", .int(requestID))
                payload = .object(object)
            }
            if reply.closesConnection {
                return ReplayOutput(delay: reply.delay, message: CastMessage(source: "receiver-0", destination: request.sourceID,
                                                                             namespace: .connection, json: ["type": "CLOSE"]),
                                    isAnswer: false, closesConnection: true)
            }
            let message = CastMessage(source: reply.isAnswer ? request.destinationID : reply.source, destination: request.sourceID,
                                      namespace: reply.namespace, json: payload)
            return ReplayOutput(delay: reply.delay, message: message, isAnswer: reply.isAnswer, closesConnection: reply.closesConnection)
        }
    }
}

extension ReplayScript {
    /// The newest recorded message of `answer`'s namespace and type sent on this connection by
    /// `now`, as an answer (`delay` 0).
    func currentStatus(like answer: Reply, now: Double, cursor: ReplayCursor) -> Reply? {
        let type = answer.payload["type"]?.string
        var newest: (at: Double, reply: Reply)?
        for (index, started) in cursor.startedAt {
            for reply in entries[index].replies where reply.namespace == answer.namespace && reply.payload["type"]?.string == type {
                let at = started + reply.delay
                if at <= now, newest.map({ at >= $0.at }) ?? true { newest = (at, reply) }
            }
        }
        guard var reply = newest?.reply else { return nil }
        reply.delay = 0
        reply.isAnswer = true
        return reply
    }
}

/// One recorded message to send `delay` seconds after the request it follows.
public struct ReplayOutput: Sendable, Equatable {
    public var delay: Double
    public var message: CastMessage
    public var isAnswer: Bool
    /// Close the connection instead of sending (a recorded drop); `message` is a placeholder.
    public var closesConnection = false
}

/// Which recorded requests a sender connection has been answered with already.
public struct ReplayCursor: Sendable, Equatable {
    var used: Set<Int> = []
    /// When each used entry was asked (the replay clock).
    var startedAt: [Int: Double] = [:]
    public init() {}
}

public struct ReplayScriptError: Error, CustomStringConvertible, Sendable {
    public let description: String
}
