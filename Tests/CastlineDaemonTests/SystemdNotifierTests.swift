import CastlineDaemon
import Glibc
import Testing

/// sd_notify through libsystemd to a real datagram socket the test binds (what systemd does).
@Suite(.serialized) struct SystemdNotifierTests {
    @Test func readyStatusAndStoppingReachTheNotifySocket() throws {
        let path = "/tmp/castline-notify-\(getpid()).sock"
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func receive() -> String {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &buffer, buffer.count, 0)
            return n > 0 ? String(decoding: buffer[..<n], as: UTF8.self) : ""
        }

        unsetenv("NOTIFY_SOCKET")
        let notifier = SystemdNotifier()
        #expect(!notifier.isActive)
        #expect(!notifier.notify("STATUS=nobody listens"))
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        #expect(notifier.isActive)
        notifier.ready(status: "1 job(s)\nsecond line")
        #expect(receive() == "READY=1\nSTATUS=1 job(s) second line\nMAINPID=\(getpid())")
        notifier.status("2 playing")
        #expect(receive() == "STATUS=2 playing")
        notifier.reloading()
        #expect(receive().hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        notifier.stopping("bye")
        #expect(receive() == "STOPPING=1\nSTATUS=bye")
        #expect(notifier.watchdogInterval == nil)
        setenv("WATCHDOG_USEC", "30000000", 1)
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        defer { unsetenv("WATCHDOG_USEC"); unsetenv("WATCHDOG_PID") }
        #expect(notifier.watchdogInterval == 30)
    }
}
