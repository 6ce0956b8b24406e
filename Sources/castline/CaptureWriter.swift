import CastCore
import CastLogging
import CastProtocol
import CastSender
import Glibc
import Synchronization

/// The JSON-lines file `castline capture` writes: first a `capture` line (the device as
/// discovery gave it, its TXT, its eureka_info), then one `frame` line per message in or out in
/// the frame log's shape (``CastFrameRecord``) plus `offset` (seconds since the capture began),
/// a `closed` line when a connection ends (a reconnect follows as frames), then an `end` line. Each line is one `write(2)` to a file opened with `O_APPEND`, so a crash
/// leaves whole lines. Thread-safe (the session's event loop writes frames).
final class CaptureWriter: Sendable {
    static let formatVersion = 1

    private let descriptor: Int32
    private let redact: Bool
    private let started = MonotonicClock.seconds()
    private let frames = Mutex<Int>(0)

    /// Creates (truncates) `path`.
    init(path: String, redact: Bool) throws(CaptureError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CaptureError(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
        descriptor = fd
        self.redact = redact
    }

    deinit { close(descriptor) }

    var framesWritten: Int { frames.withLock { $0 } }

    /// The device's identity: `device` (id, name, model, endpoint, provider), `txt` (what
    /// discovery gave: id, fn, md, ca, rs), `eurekaInfo` (the whole document, or null).
    func header(device: CastDevice, eurekaInfo: JSONValue?) {
        var txt = JSONObject()
        txt.set("id", .string(device.id))
        txt.set("fn", .string(device.friendlyName))
        if !device.modelName.isEmpty { txt.set("md", .string(device.modelName)) }
        if let bits = device.capabilities?.rawValue { txt.set("ca", .string(String(bits))) }
        if let status = device.statusText { txt.set("rs", .string(status)) }
        var object = line(event: "capture")
        object.set("version", .int(Int64(Self.formatVersion)))
        object.set("redacted", .bool(redact))
        object.set("device", [
            "id": .string(device.id), "name": .string(device.friendlyName), "model": .string(device.modelName),
            "host": .string(device.host), "port": .int(Int64(device.port)), "provider": .string(device.provider),
        ])
        object.set("txt", .object(txt))
        object.set("eurekaInfo", eurekaInfo.map { redact ? PayloadRedaction.redacted($0) : $0 } ?? .null)
        append(object)
    }

    func frame(_ message: CastMessage, inbound: Bool) {
        // Heartbeats carry nothing a replay needs and would drown the rest.
        if message.namespace == .heartbeat { return }
        var object = line(event: "frame")
        for (key, value) in CastFrameRecord.fields(of: message, direction: inbound ? "in" : "out", redact: redact) { object.set(key, value) }
        append(object)
        frames.withLock { $0 += 1 }
    }

    /// The connection closed (a drop, or the end): `{"event":"closed"}`. The session's reconnect
    /// then shows as frames after it.
    func closed() {
        append(line(event: "closed"))
    }

    func end(reason: String) {
        var object = line(event: "end")
        object.set("reason", .string(reason))
        object.set("frames", .int(Int64(framesWritten)))
        append(object)
    }

    private func line(event: String) -> JSONObject {
        var object = JSONObject()
        object.set("time", .string(LogRecordFormatter.timestamp(LogRecord.now())))
        object.set("event", .string(event))
        object.set("offset", .double(((MonotonicClock.seconds() - started) * 1_000_000).rounded() / 1_000_000))
        return object
    }

    private func append(_ object: JSONObject) {
        var bytes = JSONValue.object(object).serializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}

struct CaptureError: Error, CustomStringConvertible {
    let description: String
}
