import Glibc

/// A deliberately dumb blocking HTTP/1.1 client on a plain socket, so the server tests depend on
/// nothing but the kernel: writes requests as given, reads responses framed by `Content-Length`
/// (or by EOF), every read bounded by a 5 s `SO_RCVTIMEO`.
final class RawHTTPClient {
    /// One parsed response.
    struct Response {
        var status: Int
        /// Header fields in order, names as sent.
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        /// The first value of header `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var closed = false

    /// Connects to `host` (an IPv4 or IPv6 literal) on `port`, from the local address `source`
    /// when given (`127.0.0.2`: another machine, as the server sees it).
    init(host: String, port: Int, source: String? = nil) throws {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(first) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else {
                Glibc.close(fd)
                throw Failure(description: "bad source address \(source)")
            }
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                Glibc.close(fd)
                throw Failure(description: "bind to \(source): errno \(errno)")
            }
        }
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "connect to \(host):\(port): errno \(code)")
        }
        self.fd = fd
    }

    deinit { if !closed { Glibc.close(fd) } }

    func close() {
        guard !closed else { return }
        closed = true
        Glibc.close(fd)
    }

    /// Sends `text` as is (use `\r\n` line ends).
    func send(_ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send: errno \(errno)") }
            bytes = bytes.dropFirst(sent)
        }
    }

    /// `METHOD target HTTP/1.1` with `Host` and the extra header lines, then reads the response.
    func request(_ method: String, _ target: String, headers: [String] = [], expectBody: Bool = true) throws -> Response {
        try send(Self.requestText(method, target, headers: headers))
        return try readResponse(expectBody: expectBody)
    }

    static func requestText(_ method: String, _ target: String, headers: [String] = []) -> String {
        (["\(method) \(target) HTTP/1.1", "Host: test"] + headers).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Reads one response. `expectBody: false` for HEAD (no body whatever `Content-Length` says).
    /// Without `Content-Length` the body runs to EOF (and 204 has none).
    func readResponse(expectBody: Bool = true) throws -> Response {
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw Failure(description: "bad status line in \(headText)")
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            return (String(line[..<colon]), String(value))
        }
        var response = Response(status: status, headers: headers, body: [])
        guard expectBody, status != 204, status != 304 else { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            while buffer.count < length { guard try fill() else { throw Failure(description: "EOF in body") } }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    /// True once the server has closed the connection (EOF) and nothing is left unread.
    func readsEOF() throws -> Bool {
        if !buffer.isEmpty { return false }
        return try !fill()
    }

    private func readUntilHeadEnd() throws -> Int {
        let marker: [UInt8] = [13, 10, 13, 10]
        while true {
            if buffer.count >= 4 {
                for index in 0...(buffer.count - 4) where buffer[index..<index + 4].elementsEqual(marker) { return index }
            }
            guard try fill() else { throw Failure(description: "EOF before the response head") }
        }
    }

    /// Appends what the socket has; false on EOF. Throws on timeout or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 { throw Failure(description: errno == EAGAIN ? "read timed out" : "recv: errno \(errno)") }
        if count == 0 { return false }
        buffer += chunk[..<count]
        return true
    }
}
