import CastProtocol
import Glibc

/// A subscribe-only MQTT connection for `castline fleet` on a blocking socket: CONNECT, SUBSCRIBE,
/// then PUBLISH messages handed to the caller; PINGREQ keeps it open. Every wait is bounded.
final class MQTTWatch {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let keepalive: UInt16 = 30
    private let fd: Int32
    private var reader = MQTTPacketReader()
    private var lastSent = MonotonicClock.seconds()

    init(host: String, port: Int, clientID: String, username: String?, password: String?, filters: [String], timeout: Double = 5) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { throw Failure(description: "cannot resolve \(host)") }
        defer { freeaddrinfo(list) }
        var connected: Int32 = -1
        var problem = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let e = entry, connected < 0 {
            let s = socket(e.pointee.ai_family, e.pointee.ai_socktype, e.pointee.ai_protocol)
            if s >= 0 {
                var tv = timeval(tv_sec: Int(timeout), tv_usec: 0)
                setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                if connect(s, e.pointee.ai_addr, e.pointee.ai_addrlen) == 0 { connected = s } else {
                    problem = String(cString: strerror(errno))
                    Glibc.close(s)
                }
            }
            entry = e.pointee.ai_next
        }
        guard connected >= 0 else { throw Failure(description: "cannot connect: \(problem)") }
        fd = connected
        do {
            try send(MQTTPackets.connect(clientID: clientID, keepalive: Self.keepalive, username: username, password: password))
            var accepted: UInt8?
            try receive(until: MonotonicClock.seconds() + timeout, connack: { accepted = $0 }) { _, _ in }
            guard let code = accepted else { throw Failure(description: "the broker did not answer CONNECT within \(Int(timeout)) s") }
            guard code == 0 else { throw Failure(description: "the broker refused the connection (CONNACK \(code)\(code == 4 || code == 5 ? ": not authorised" : ""))") }
            try send(MQTTPackets.subscribe(id: 1, filters: filters))
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    func close() {
        try? send(MQTTPackets.disconnect)
        Glibc.close(fd)
    }

    /// Reads until `deadline` (monotonic seconds), handing each PUBLISH to `message`; with
    /// `connack`, returns as soon as the CONNACK came.
    func receive(until deadline: Double, connack: ((UInt8) -> Void)? = nil, _ message: (String, [UInt8]) -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            while let packet = try nextPacket() {
                switch packet {
                case .connack(let code):
                    if let connack {
                        connack(code)
                        return
                    }
                case .publish(let topic, let payload, _, let id):
                    if let id { try send(MQTTPackets.puback(id: id)) }
                    message(topic, payload)
                case .suback, .other: break
                }
            }
            let now = MonotonicClock.seconds()
            if now - lastSent > Double(Self.keepalive) / 2 { try send(MQTTPackets.pingreq) }
            guard now < deadline else { return }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&p, 1, Int32(max(1, min(1000, (deadline - now) * 1000))))
            if rc < 0, errno != EINTR { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
            guard rc > 0 else { continue }
            let n = read(fd, &buffer, buffer.count)
            if n == 0 { throw Failure(description: "the broker closed the connection") }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(description: "read: \(String(cString: strerror(errno)))")
            }
            reader.append(buffer[0..<n])
        }
    }

    private func nextPacket() throws -> MQTTIncoming? {
        do { return try reader.next() } catch { throw Failure(description: "malformed packet from the broker: \(error)") }
    }

    private func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        lastSent = MonotonicClock.seconds()
    }
}
