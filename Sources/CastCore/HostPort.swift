/// `host:port` with an IPv6 host in brackets: how castline names a device, a listener or a server
/// in logs, errors, URLs and the HTTP `Host` header.
package enum HostPort {
    /// `192.0.2.7:8009`, `[fe80::1]:8009`.
    package static func name(host: String, port: Int) -> String {
        "\(bracketed(host)):\(port)"
    }

    /// The host as a URL writes it: an IPv6 address (it has a colon) in brackets, anything else as is.
    package static func bracketed(_ host: String) -> String {
        // A byte test: `contains(":")` with a string argument is Foundation's CFString search here.
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    }
}
