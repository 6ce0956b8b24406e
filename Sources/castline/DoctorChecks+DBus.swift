import Glibc

/// The system D-Bus: where it is, whether it answers, the verdict.
extension DoctorChecks {
    /// The socket `$DBUS_SYSTEM_BUS_ADDRESS` names (`unix:path=…` or `unix:abstract=…`, the first
    /// unix entry), `/run/dbus/system_bus_socket` without it; nil when it names no unix socket. Pure.
    static func dbusSocket(address: String?) -> (path: String, abstract: Bool)? {
        guard let address, !address.isEmpty else { return ("/run/dbus/system_bus_socket", false) }
        for entry in address.split(separator: ";") where entry.hasPrefix("unix:") {
            for pair in entry.dropFirst(5).split(separator: ",") {
                if pair.hasPrefix("path=") { return (unescape(pair.dropFirst(5)), false) }
                if pair.hasPrefix("abstract=") { return (unescape(pair.dropFirst(9)), true) }
            }
        }
        return nil
    }

    /// D-Bus address values escape bytes as `%XX`.
    static func unescape(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var i = text.utf8.startIndex
        let utf8 = text.utf8
        while i < utf8.endIndex {
            if utf8[i] == UInt8(ascii: "%"), let a = utf8.index(i, offsetBy: 2, limitedBy: utf8.endIndex), a < utf8.endIndex,
               let value = UInt8(String(decoding: utf8[utf8.index(after: i)...a], as: UTF8.self), radix: 16) {
                bytes.append(value)
                i = utf8.index(after: a)
            } else {
                bytes.append(utf8[i])
                i = utf8.index(after: i)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The first line the bus answers to `AUTH EXTERNAL <uid>` within `timeout` seconds; nil when it
    /// stays silent (a hung dbus-daemon: libavahi-client would then block without a timeout).
    static func dbusHandshake(_ path: String, abstract: Bool, timeout: Double = 1) -> Result<String?, SocketError> {
        let fd: Int32
        switch connectUnix(path, abstract: abstract, type: Int32(SOCK_STREAM.rawValue)) {
        case .success(let opened): fd = opened
        case .failure(let error): return .failure(error)
        }
        defer { close(fd) }
        let hexUID = String(geteuid()).utf8.map { String($0, radix: 16) }.joined()
        let request = [UInt8(0)] + Array("AUTH EXTERNAL \(hexUID)\r\n".utf8)
        var reply: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var sent = 0
        while ContinuousClock.now < deadline, !reply.contains(UInt8(ascii: "\n")) {
            var p = pollfd(fd: fd, events: Int16(sent < request.count ? POLLOUT : POLLIN), revents: 0)
            let left = (deadline - ContinuousClock.now).components
            let remaining = Int32(clamping: max(1, left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000))
            guard poll(&p, 1, remaining) > 0 else { continue }
            if sent < request.count {
                let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n < 0, errno != EAGAIN { return .failure(SocketError(text: String(cString: strerror(errno)))) }
                sent += max(n, 0)
            } else {
                var chunk = [UInt8](repeating: 0, count: 256)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 { return .failure(SocketError(text: "the bus closed the connection")) }
                if n > 0 { reply += chunk[..<n] }
            }
        }
        guard let end = reply.firstIndex(of: UInt8(ascii: "\n")) else { return .success(nil) }
        return .success(String(decoding: reply[..<end], as: UTF8.self).trimmingSuffix("\r"))
    }

    /// The system bus verdict. Pure. `needed`: the avahi plugin is in use (it reaches avahi-daemon over D-Bus).
    /// `handshake`: the bus's answer to AUTH (nil: silent within the timeout; absent: not tried).
    static func dbusCheck(address: String?, facts: SocketFacts?, handshake: Result<String?, SocketError>? = nil, needed: Bool) -> DoctorCheck {
        let origin = address.map { $0.isEmpty ? "the default" : "$DBUS_SYSTEM_BUS_ADDRESS" } ?? "the default"
        guard let facts else {
            return DoctorCheck("D-Bus system bus", .skipped, "$DBUS_SYSTEM_BUS_ADDRESS (\(address ?? "")) names no unix socket: not checked")
        }
        guard let error = facts.connectError else {
            switch handshake {
            case .success(nil)?:
                return DoctorCheck("D-Bus system bus", needed ? .error : .warning,
                                   "\(facts.path) (\(origin)) accepts connections but does not answer the D-Bus handshake: the bus is hung"
                                       + (needed ? " (the avahi plugin would block on it, so it is not started)" : ""),
                                   fix: "sudo systemctl restart dbus")
            case .success(let reply?) where !reply.hasPrefix("OK"):
                return DoctorCheck("D-Bus system bus", .warning, "\(facts.path) (\(origin)) refuses this user: \(reply)",
                                   fix: "check the bus policy (/usr/share/dbus-1/system.d/avahi-dbus.conf lets every user talk to avahi)")
            case .failure(let failure)?:
                return DoctorCheck("D-Bus system bus", needed ? .error : .warning, "\(facts.path) (\(origin)): handshake failed: \(failure.text)",
                                   fix: "sudo systemctl restart dbus")
            default:
                return DoctorCheck("D-Bus system bus", .ok, "\(facts.path) (\(origin)) answers")
            }
        }
        let why = !facts.exists ? "no socket at \(facts.path) (\(origin)): the system D-Bus is not running here"
            : !facts.isSocket ? "\(facts.path) (\(origin)) is not a socket"
            : "\(facts.path) (\(origin)) refuses connections (\(error)): stale socket, dbus-daemon is not running"
        return DoctorCheck("D-Bus system bus", needed ? .error : .warning,
                           why + (needed ? "; the avahi plugin cannot reach avahi-daemon without it" : ""),
                           fix: "sudo systemctl start dbus (in a container: bind-mount the host's /run/dbus, or list devices by address under devices:)")
    }
}
