import CastCore
import CastDeviceAuth
import CastLogging
import CastProtocol
import Glibc
import Synchronization

/// A JSON-lines log of every frame a simulated device receives or sends, plus frame-level events
/// (undecodable bodies, oversized lengths, connections opened and closed).
///
/// One object per line: `{"time", "device", "connection", "peer", "direction", "source",
/// "destination", "namespace", "type", "requestId", "bytes", "payload" | "binary"}`. JSON payloads (credentials redacted: `PayloadRedaction`)
/// are embedded as JSON (parsed), other text as a string, binary payloads as base64 with a short
/// `summary` for device auth. Thread-safe: devices on every event loop append through one lock;
/// each line is one `write(2)` to a file opened with `O_APPEND`.
public final class FrameLog: Sendable {
    private let descriptor: Int32
    private let path: String
    private let state = Mutex<Int>(0)

    /// Opens (creates or appends to) `path`.
    public init(path: String) throws(SimulatorError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot open frame log \(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
        self.path = path
    }

    deinit { close(descriptor) }

    /// Lines written so far.
    public var linesWritten: Int { state.withLock { $0 } }

    /// Records a message.
    func message(_ message: CastMessage, direction: String, device: String, connection: UInt64, peer: String) {
        var object = header(event: "frame", device: device, connection: connection, peer: peer)
        for (key, value) in CastFrameRecord.fields(of: message, direction: direction) { object.set(key, value) }
        if message.namespace == .deviceAuth, case .binary(let bytes) = message.payload {
            object.set("type", .string(DeviceAuthSummary.describe(bytes)))
        }
        append(object)
    }

    /// Records a connection-level event (`opened`, `closed`, `frameError`, `fault` …) with fields.
    func event(_ name: String, device: String, connection: UInt64?, peer: String?, fields: JSONObject = JSONObject()) {
        var object = header(event: name, device: device, connection: connection, peer: peer)
        for (key, value) in fields { object.set(key, value) }
        append(object)
    }

    private func header(event: String, device: String, connection: UInt64?, peer: String?) -> JSONObject {
        var object = JSONObject()
        object.set("time", .string(LogRecordFormatter.timestamp(LogRecord.now())))
        object.set("event", .string(event))
        object.set("device", .string(device))
        if let connection { object.set("connection", .int(Int64(connection))) }
        if let peer { object.set("peer", .string(peer)) }
        return object
    }

    private func append(_ object: JSONObject) {
        var line = JSONValue.object(object).serializedBytes()
        line.append(UInt8(ascii: "\n"))
        state.withLock { count in
            _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            count += 1
        }
    }
}
