#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The local address that faces a device: the source address the kernel picks for packets to it.
///
/// A Cast device fetches media from the URL the sender hands it, so that URL must name an
/// address of this machine the device can reach. On a multi-homed machine (Wi-Fi + VPN +
/// Docker bridges) only the routing table knows which one that is.
package enum FacingAddress {
    /// Why no facing address could be found (name does not resolve, no route to the device).
    package struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A sentence naming the device and the cause.
        package let description: String

        /// A failure described by `description`.
        package init(_ description: String) { self.description = description }
    }

    /// The numeric local IP (`192.168.1.10`, `fe80::1%wlan0`, `127.0.0.1`) the kernel would use
    /// to reach `host` on `port`.
    ///
    /// Resolves `host` with `getaddrinfo` (IPv4 or IPv6 literal, or a name), `connect()`s a UDP
    /// socket to each result in turn (a UDP connect only picks a route: no packet is sent) and
    /// reads the chosen source address with `getsockname()`. Blocking only when `host` is a
    /// name that needs DNS. Throws ``Failure`` when nothing resolves or no route exists.
    package static func localAddress(facing host: String, port: Int) throws -> String {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = socketTypeDatagram
        hints.ai_flags = AI_NUMERICSERV
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &results)
        guard status == 0, let first = results else {
            throw Failure("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var reason = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            switch sourceAddress(for: current.pointee) {
            case .success(let address): return address
            case .failure(let failure): reason = failure.description
            }
        }
        throw Failure("no route to \(host) port \(port): \(reason)")
    }

    /// Every numeric address `host` resolves to (itself when it is a literal), normalised as a
    /// peer's address is compared (``MediaFileServer/normalised(_:)``): the addresses a device
    /// fetches published media from. Throws ``Failure`` when nothing resolves.
    package static func addresses(of host: String) throws -> Set<String> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = socketTypeDatagram
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &results)
        guard status == 0, let first = results else {
            throw Failure("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var found: Set<String> = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            entry = current.pointee.ai_next
            var name = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if getnameinfo(current.pointee.ai_addr, current.pointee.ai_addrlen, &name, socklen_t(name.count), nil, 0, NI_NUMERICHOST) == 0 {
                found.insert(MediaFileServer.normalised(name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }))
            }
        }
        return found
    }

    /// The source address for one resolved destination, or why there is none.
    private static func sourceAddress(for destination: addrinfo) -> Result<String, Failure> {
        let fd = socket(destination.ai_family, destination.ai_socktype, destination.ai_protocol)
        guard fd >= 0 else { return .failure(Failure("socket: \(errnoText())")) }
        defer { close(fd) }
        guard connect(fd, destination.ai_addr, destination.ai_addrlen) == 0 else {
            return .failure(Failure("connect: \(errnoText())"))
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let named = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> Result<Void, Failure> in
                guard getsockname(fd, address, &length) == 0 else { return .failure(Failure("getsockname: \(errnoText())")) }
                let status = getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST)
                guard status == 0 else { return .failure(Failure("getnameinfo: \(String(cString: gai_strerror(status)))")) }
                return .success(())
            }
        }
        if case .failure(let failure) = named { return .failure(failure) }
        return .success(host.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    #if canImport(Glibc)
    private static let socketTypeDatagram = Int32(SOCK_DGRAM.rawValue)
    #else
    private static let socketTypeDatagram = SOCK_DGRAM
    #endif
}
