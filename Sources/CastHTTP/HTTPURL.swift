import CastCore

/// An http(s) URL taken apart for ``HTTPExchange``: scheme, host (IPv6 without brackets, a zone
/// as written: `fe80::1%25eth0`), port (the scheme's default when absent) and the request target
/// (path and query, `/` when empty; the fragment dropped). The one URL parser of castline's HTTP
/// clients (the hub's requests, the simulator's media fetch).
package struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    package var secure: Bool
    package var host: String
    package var port: Int
    package var target: String

    /// Why a text is not an http(s) URL; the description is what the simulator reports.
    package enum Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        /// `scheme://…` with another scheme (lowercased).
        case scheme(String)
        /// A port that is not a number in 1…65535.
        case port
        /// Anything else: no `scheme://`, no host, a bad character, an unclosed bracket.
        case malformed

        package var description: String {
            switch self {
            case .scheme(let scheme): return "unsupported scheme \(scheme)"
            case .port: return "invalid port in URL"
            case .malformed: return "invalid URL"
            }
        }
    }

    package init(secure: Bool, host: String, port: Int, target: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.target = target
    }

    /// nil for anything that is not an http(s) URL with a host (and a valid port). A URL is
    /// printable ASCII (an international name comes punycoded, other bytes percent-encoded).
    package init?(_ text: String) {
        guard case .success(let url) = Self.parse(text) else { return nil }
        self = url
    }

    /// The URL in `text`, or why it is none.
    package static func parse(_ text: String) -> Result<HTTPURL, Invalid> {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .failure(.malformed) }
        let lower = text.lowercased()
        let secure: Bool
        let rest: Substring
        if lower.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else if let colon = lower.firstIndex(of: ":"), colon > lower.startIndex, lower[colon...].hasPrefix("://") {
            return .failure(.scheme(String(lower[..<colon])))
        } else {
            return .failure(.malformed)
        }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var target = String(rest[authorityEnd...])
        if let hash = target.firstIndex(of: "#") { target = String(target[..<hash]) }
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        let defaultPort = secure ? 443 : 80
        let host: String
        let port: Int
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return .failure(.malformed) }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = defaultPort
            } else {
                guard after.hasPrefix(":") else { return .failure(.malformed) }
                guard let p = Int(after.dropFirst()), (1...65_535).contains(p) else { return .failure(.port) }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(p) else { return .failure(.port) }
            port = p
        } else {
            host = String(authority)
            port = defaultPort
        }
        let hostCharacters = host.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
                || c == 0x25 || c == 0x3A
        }
        guard !host.isEmpty, hostCharacters, host.contains(":") == authority.hasPrefix("[") else { return .failure(.malformed) }
        return .success(HTTPURL(secure: secure, host: host, port: port, target: target))
    }

    /// The URL `location` (a redirect's Location header) names, relative to this one.
    package func resolving(_ location: String) -> HTTPURL? {
        if let absolute = HTTPURL(location) { return absolute }
        var next = self
        if location.hasPrefix("//") { return HTTPURL((secure ? "https:" : "http:") + location) }
        if location.hasPrefix("/") {
            next.target = location
        } else {
            let base = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
            next.target = String(base[...(base.lastIndex(of: "/") ?? base.startIndex)]) + location
        }
        return next
    }

    /// The `Host` header: the host as the URL writes it, with `:port` unless it is the scheme's default.
    package var authority: String {
        port == (secure ? 443 : 80) ? HostPort.bracketed(host) : HostPort.name(host: host, port: port)
    }

    /// The host to connect to: an IPv6 zone is written `%25eth0` in URLs (RFC 6874) and `%eth0`
    /// for getaddrinfo.
    package var connectHost: String {
        guard host.contains(":"), let percent = host.firstIndex(of: "%") else { return host }
        let zone = host[host.index(after: percent)...]
        return String(host[..<percent]) + "%" + (zone.hasPrefix("25") ? String(zone.dropFirst(2)) : String(zone))
    }

    package var description: String {
        "\(secure ? "https" : "http")://\(authority)\(target)"
    }
}
