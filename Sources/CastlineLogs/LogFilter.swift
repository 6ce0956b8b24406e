import CastCore
import CastLogging

/// What `castline logs query` keeps: every condition set must hold. Pure.
public struct LogFilter: Sendable {
    /// Records at this level or more severe.
    public var minimumLevel: LogLevel?
    /// Class globs in the `CASTLINE_LOG` grammar; any may match.
    public var classPatterns: [GlobPattern] = []
    /// A device id, name, endpoint or peer address, or a glob over them.
    public var device: String?
    /// An app session id or castline's local session number.
    package var session: String?
    /// `urn:x-cast:com.google.cast.media`, `com.google.cast.media` or just `media`.
    public var namespace: String?
    /// The message type (`LOAD`, `MEDIA_STATUS`).
    public var messageType: String?
    public var requestID: Int64?
    /// Unix ns, inclusive / exclusive.
    public var since: Int64?
    package var until: Int64?
    /// A substring of the message.
    package var text: String?

    public init() {}

    package var isEmpty: Bool {
        minimumLevel == nil && classPatterns.isEmpty && device == nil && session == nil && namespace == nil
            && messageType == nil && requestID == nil && since == nil && until == nil && text == nil
    }

    public func matches(_ e: LogEntry) -> Bool {
        if let minimumLevel, !(e.level >= minimumLevel && e.level != .none) { return false }
        if let since, e.time < since { return false }
        if let until, e.time >= until { return false }
        if !classPatterns.isEmpty, !classPatterns.contains(where: { $0.matches(e.className) }) { return false }
        if let messageType, e.text("type") != messageType { return false }
        if let requestID, e.integer("requestId") != requestID { return false }
        if let namespace {
            guard let ns = e.text("namespace"), Self.namespace(ns, matches: namespace) else { return false }
        }
        if let session {
            guard e.text("session") == session || e.text("localSession") == session || e.text("sessionId") == session else { return false }
        }
        if let device {
            let candidates = ["device", "deviceName", "endpoint", "peer"].compactMap { e.text($0) }
            if let glob = try? GlobPattern(device), device.contains(where: { $0 == "*" || $0 == "?" || $0 == "[" }) {
                guard candidates.contains(where: { glob.matches($0) }) else { return false }
            } else {
                guard candidates.contains(device) else { return false }
            }
        }
        if let text, !e.body.contains(text) { return false }
        return true
    }

    static func namespace(_ ns: String, matches wanted: String) -> Bool {
        ns == wanted || ns == "urn:x-cast:" + wanted || ns.hasSuffix("." + wanted)
    }
}
