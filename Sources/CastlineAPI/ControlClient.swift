import CastCore
import CastlineDaemon
#if canImport(Glibc)
import Glibc
#endif

/// The CLI's side of the control API: one HTTP/1.1 request over the daemon's Unix socket (or
/// plain TCP with the bearer token), with blocking calls and a deadline for each step. No event
/// loop to start, which keeps `castline cast` through the daemon a few milliseconds from start
/// to answer.
package struct ControlClient: Sendable {
    package enum Endpoint: Sendable, Equatable, CustomStringConvertible {
        case unix(String)
        case tcp(host: String, port: Int, token: String?)

        package var description: String {
            switch self {
            case .unix(let path): return path
            case .tcp(let host, let port, _): return "\(host):\(port)"
            }
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        /// Nothing listens there (no daemon): the caller may fall back to direct mode.
        package let noDaemon: Bool
        package let description: String
    }

    package struct Response: Sendable {
        package let status: Int
        package let body: [UInt8]
        package var json: JSONValue? { try? JSONValue.parse(String(decoding: body, as: UTF8.self)) }
    }

    package let endpoint: Endpoint
    /// Seconds for the connect, and for the whole exchange after it.
    package let connectTimeout: Double
    package let timeout: Double

    package init(endpoint: Endpoint, connectTimeout: Double = 1, timeout: Double = 60) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.timeout = timeout
    }

    /// Sends one request and returns the response.
    package func send(_ method: String, _ path: String, body: JSONValue? = nil) throws(Failure) -> Response {
        try send(method, path, raw: body.map { Array($0.serialized().utf8) })
    }

    /// Sends one request with `raw` as its body (JSON or YAML text) and returns the response.
    package func send(_ method: String, _ path: String, raw: [UInt8]?) throws(Failure) -> Response {
        let fd = try connect()
        defer { close(fd) }
        let deadline = Self.now() + timeout
        var request = "\(method) \(path) HTTP/1.1\r\nHost: castline\r\nConnection: close\r\nAccept: application/json\r\n"
        if case .tcp(_, _, let token?) = endpoint { request += "Authorization: Bearer \(token)\r\n" }
        let payload = raw ?? []
        if raw != nil { request += "Content-Type: application/json\r\n" }
        request += "Content-Length: \(payload.count)\r\n\r\n"
        try write(fd, Array(request.utf8) + payload, deadline: deadline)
        var received: [UInt8] = []
        var headerEnd: Int?
        var contentLength: Int?
        var status = 0
        while true {
            if let end = headerEnd, let length = contentLength, received.count >= end + length { break }
            let chunk = try read(fd, deadline: deadline)
            if chunk.isEmpty { break }
            received += chunk
            if headerEnd == nil, let end = Self.headerEnd(received) {
                headerEnd = end
                let head = String(decoding: received[..<end], as: UTF8.self)
                (status, contentLength) = Self.parseHead(head)
                guard status > 0 else { throw Failure(noDaemon: false, description: "\(endpoint) answered something that is not HTTP") }
            }
        }
        guard let end = headerEnd, status > 0 else {
            throw Failure(noDaemon: false, description: "\(endpoint) closed the connection before answering")
        }
        return Response(status: status, body: Array(received[end...].prefix(contentLength ?? Int.max)))
    }

    /// Reads a streaming response line by line (the event stream) until `line` returns false, the
    /// server closes, or `seconds` pass (nil: no limit).
    package func stream(_ path: String, for seconds: Double? = nil, line: (String) -> Bool) throws(Failure) {
        let fd = try connect()
        defer { close(fd) }
        var request = "GET \(path) HTTP/1.1\r\nHost: castline\r\nAccept: text/event-stream\r\n"
        if case .tcp(_, _, let token?) = endpoint { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        try write(fd, Array(request.utf8), deadline: Self.now() + timeout)
        let deadline = seconds.map { Self.now() + $0 } ?? .infinity
        var pending: [UInt8] = []
        var inBody = false
        while Self.now() < deadline {
            let chunk: [UInt8]
            do { chunk = try read(fd, deadline: min(deadline, Self.now() + 3600)) } catch {
                if Self.now() >= deadline { return }
                throw error
            }
            if chunk.isEmpty { return }
            pending += chunk
            if !inBody {
                guard let end = Self.headerEnd(pending) else { continue }
                let (status, _) = Self.parseHead(String(decoding: pending[..<end], as: UTF8.self))
                guard status == 200 else { throw Failure(noDaemon: false, description: "the event stream answered \(status)") }
                pending.removeFirst(end)
                inBody = true
            }
            while let newline = pending.firstIndex(of: 0x0A) {
                let text = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                guard line(text.hasSuffix("\r") ? String(text.dropLast()) : text) else { return }
            }
        }
    }

    // MARK: Sockets

    func connect() throws(Failure) -> Int32 {
        switch endpoint {
        case .unix(let path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw Failure(noDaemon: false, description: "socket: \(String(cString: strerror(errno)))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                close(fd)
                throw Failure(noDaemon: true, description: "socket path too long: \(path)")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard result == 0 else {
                let code = errno
                close(fd)
                let absent = code == ENOENT || code == ECONNREFUSED
                throw Failure(noDaemon: absent, description: "\(path): \(String(cString: strerror(code)))"
                              + (code == EACCES ? " (the socket is mode 0660: join the daemon's group, or use the TCP listener)" : ""))
            }
            return fd
        case .tcp(let host, let port, _):
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
                throw Failure(noDaemon: true, description: "cannot resolve \(host)")
            }
            defer { freeaddrinfo(list) }
            let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw Failure(noDaemon: false, description: "socket: \(String(cString: strerror(errno)))") }
            if Glibc.connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0, errno != EINPROGRESS {
                let code = errno
                close(fd)
                throw Failure(noDaemon: code == ECONNREFUSED, description: "\(host):\(port): \(String(cString: strerror(code)))")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard poll(&poller, 1, Int32(connectTimeout * 1000)) == 1, getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0,
                  error == 0 else {
                close(fd)
                throw Failure(noDaemon: error == ECONNREFUSED, description: "\(host):\(port): "
                              + (error == 0 ? "no answer within \(connectTimeout) s" : String(cString: strerror(error))))
            }
            return fd
        }
    }

    func write(_ fd: Int32, _ bytes: [UInt8], deadline: Double) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            try wait(fd, for: Int16(POLLOUT), deadline: deadline)
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(noDaemon: false, description: "\(endpoint): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    func read(_ fd: Int32, deadline: Double) throws(Failure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            try wait(fd, for: Int16(POLLIN), deadline: deadline)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(noDaemon: false, description: "\(endpoint): \(String(cString: strerror(errno)))")
            }
            return Array(buffer[..<n])
        }
    }

    func wait(_ fd: Int32, for events: Int16, deadline: Double) throws(Failure) {
        while true {
            let left = deadline - Self.now()
            guard left > 0 else { throw Failure(noDaemon: false, description: "\(endpoint) did not answer within \(Int(timeout)) s") }
            var poller = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&poller, 1, Int32(min(left, 3600) * 1000) + 1)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw Failure(noDaemon: false, description: "poll: \(String(cString: strerror(errno)))") }
        }
    }

    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i + 4 }
        return nil
    }

    /// The status code and the Content-Length of a response head (0 when it is not HTTP).
    static func parseHead(_ head: String) -> (Int, Int?) {
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/1."), first.count >= 12, let status = Int(first.dropFirst(9).prefix(3)) else {
            return (0, nil)
        }
        var length: Int?
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].drop { $0 == " " })
            }
        }
        return (status, length)
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Whether a server answers on a Unix socket path (a connect that succeeds).
package enum SocketProbe {
    package static func answers(_ path: String) -> Bool {
        (try? ControlClient(endpoint: .unix(path), connectTimeout: 0.5, timeout: 1).connect()).map { close($0); return true } ?? false
    }
}
