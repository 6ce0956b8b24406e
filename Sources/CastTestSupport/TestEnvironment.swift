#if canImport(Glibc)
import Glibc
#endif

/// What the machine running the tests offers, for Swift Testing conditions: a test that needs
/// root or IPv6 says so with a trait and is skipped, with its reason printed, where it cannot run:
///
///     @Test(.enabled(if: TestEnvironment.isRoot, "needs root: unshare -m (mount namespaces)"))
package enum TestEnvironment {
    /// The tests run as root (euid 0): network and mount namespaces, chown to another user.
    /// CI runs as root, so the tests that need it run there.
    package static let isRoot: Bool = geteuid() == 0

    /// A TCP socket binds to [::1] (IPv6 is not disabled on the loopback interface).
    package static let hasIPv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }()
}
