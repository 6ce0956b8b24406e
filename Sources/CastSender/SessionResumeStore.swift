import CastCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What is saved so a session can be resumed after a process restart. Value type.
public struct SessionResumeRecord: Sendable, Equatable {
    /// Format version written in the file.
    public static let version = 1

    public var device: CastDevice
    public var appID: String
    public var sessionID: String
    public var transportID: String

    public init(device: CastDevice, appID: String, sessionID: String, transportID: String) {
        self.device = device
        self.appID = appID
        self.sessionID = sessionID
        self.transportID = transportID
    }

    var json: JSONValue {
        [
            "device": [
                "id": .string(device.id), "friendlyName": .string(device.friendlyName), "host": .string(device.host),
                "port": .int(Int64(device.port)), "modelName": .string(device.modelName),
            ],
            "appId": .string(appID), "sessionId": .string(sessionID), "transportId": .string(transportID),
        ]
    }

    init(json: JSONValue) throws(SessionResumeStore.Error) {
        guard case .object(let object) = json else { throw .malformed("not a JSON object") }
        guard case .object(let device)? = object["device"] else { throw .malformed("missing \"device\" object") }
        func string(_ from: JSONObject, _ key: String) throws(SessionResumeStore.Error) -> String {
            guard let value = from[key]?.string, !value.isEmpty else { throw .malformed("missing or empty \"\(key)\"") }
            return value
        }
        guard let port = device["port"]?.int, (1...65_535).contains(port) else { throw .malformed("\"device.port\" is not a port") }
        self.device = CastDevice(id: try string(device, "id"), friendlyName: device["friendlyName"]?.string ?? "",
                                 host: try string(device, "host"), port: Int(port), modelName: device["modelName"]?.string ?? "",
                                 provider: "resume")
        appID = try string(object, "appId")
        sessionID = try string(object, "sessionId")
        transportID = try string(object, "transportId")
    }
}

/// The session-resume file: `{"version":1,"sessions":[record, …]}`, one record per device,
/// rewritten atomically (temporary file + fsync + rename, mode 0600) on every change, deleted
/// when the last session ends. Thread-safe: sessions on many devices share one store.
public final class SessionResumeStore: Sendable {
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case io(path: String, String)
        case malformed(String)

        public var description: String {
            switch self {
            case .io(let path, let why): return "\(path): \(why)"
            case .malformed(let why): return "malformed resume record: \(why)"
            }
        }
    }

    public let path: String
    /// Records by device id, in the order they were first saved.
    private let records = Mutex<[SessionResumeRecord]>([])

    /// Reads what the file holds (nothing when it does not exist). A file that cannot be parsed
    /// throws; ``openRepairing(path:)`` moves it aside instead.
    public init(path: String) throws(Error) {
        self.path = path
        let loaded = try Self.read(path)
        records.withLock { $0 = loaded }
    }

    /// Opens the store; a malformed file is renamed to `PATH.corrupt` (kept for inspection) and
    /// the store starts empty, so resuming works again from the next save. Returns the store and
    /// what was wrong, if anything. Other errors (permissions, I/O) still throw.
    public static func openRepairing(path: String) throws(Error) -> (store: SessionResumeStore, repaired: Error?) {
        do {
            return (try SessionResumeStore(path: path), nil)
        } catch .malformed(let why) {
            let aside = path + ".corrupt"
            guard rename(path, aside) == 0 else { throw .io(path: path, errnoText()) }
            return (try SessionResumeStore(path: path), .malformed(why + " (moved to \(aside))"))
        }
    }

    /// The saved sessions.
    public var saved: [SessionResumeRecord] { records.withLock { $0 } }

    /// Saves or replaces the record of `record.device.id`.
    public func save(_ record: SessionResumeRecord) throws(Error) {
        // One lock around change, write and rename: concurrent sessions never interleave writes
        // or rename an older list over a newer one.
        try records.withLock { list throws(Error) in
            var next = list
            if let index = next.firstIndex(where: { $0.device.id == record.device.id }) { next[index] = record } else { next.append(record) }
            try write(next)
            list = next
        }
    }

    /// Removes the record of `deviceID` (the file goes when it was the last).
    public func remove(deviceID: String) throws(Error) {
        try records.withLock { list throws(Error) in
            guard list.contains(where: { $0.device.id == deviceID }) else { return }
            let next = list.filter { $0.device.id != deviceID }
            try write(next)
            list = next
        }
    }

    private func write(_ list: [SessionResumeRecord]) throws(Error) {
        if list.isEmpty {
            if unlink(path) != 0, errno != ENOENT { throw .io(path: path, Self.errnoText()) }
            return
        }
        let document: JSONValue = ["version": .int(Int64(SessionResumeRecord.version)), "sessions": .array(list.map(\.json))]
        try Self.atomicWrite(document.serialized() + "\n", to: path)
    }

    private static func atomicWrite(_ text: String, to path: String) throws(Error) {
        do { try SmallFile.replace(path: path, contents: Array(text.utf8), mode: 0o600) } catch {
            throw .io(path: error.path, error.reason)
        }
    }

    private static func read(_ path: String) throws(Error) -> [SessionResumeRecord] {
        let bytes: [UInt8]
        do {
            guard let contents = try SmallFile.read(path: path, limit: 1 << 20) else { return [] }
            bytes = contents
        } catch {
            if error.step == .tooLarge { throw .malformed("\(path) is larger than 1 MiB") }
            throw .io(path: path, error.reason)
        }
        let json: JSONValue
        do { json = try JSONValue.parse(String(decoding: bytes, as: UTF8.self)) } catch {
            throw .malformed("\(path): \(error)")
        }
        guard case .object(let object) = json, object["version"]?.int == Int64(SessionResumeRecord.version),
              case .array(let sessions)? = object["sessions"] else {
            throw .malformed("\(path): expected {\"version\":\(SessionResumeRecord.version),\"sessions\":[…]}")
        }
        var records: [SessionResumeRecord] = []
        for (index, entry) in sessions.enumerated() {
            do { records.append(try SessionResumeRecord(json: entry)) } catch {
                throw .malformed("\(path): sessions[\(index)]: \(error)")
            }
        }
        return records
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}
