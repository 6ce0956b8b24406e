import CastHTTP
import CastLogging
import CastTestSupport
import NIOCore
import NIOPosix
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `ListenerErrorHandler` on a real listening socket on loopback: a failed accept pauses
/// accepting and is logged once, a connection waiting in the backlog is served after the pause,
/// and an accepted connection that could not be set up is logged and closed.
@Suite("ListenerErrorHandler over a loopback listener")
struct ListenerErrorHandlerTests {
    /// A listener whose child initializer counts the connections it set up (or, with
    /// `failSetup`, fails every one).
    final class Listener: Sendable {
        final class Counter: Sendable {
            let value = Atomic<Int>(0)
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let setUp = Counter()
        let channel: Channel

        init(log: Logger, pause: TimeAmount, failSetup: Bool = false) async throws {
            let setUp = self.setUp
            channel = try await ServerBootstrap(group: group)
                .childChannelInitializer { child in
                    if failSetup { return child.eventLoop.makeFailedFuture(IOError(errnoCode: EACCES, reason: "setsockopt")) }
                    setUp.value.add(1, ordering: .relaxed)
                    return child.eventLoop.makeSucceededVoidFuture()
                }
                .bind(host: "127.0.0.1", port: 0)
                .flatMap { $0.addListenerErrorHandler(log: log, pause: pause) }
                .get()
        }

        var port: Int { channel.localAddress?.port ?? 0 }
        func autoRead() async throws -> Bool { try await channel.getOption(.autoRead).get() }

        func close() async throws {
            try await channel.close()
            try await group.shutdownGracefully()
        }
    }

    /// Runs `body` with a new ``Listener`` and closes it afterwards, also when `body` throws.
    static func withListener(log: Logger, pause: TimeAmount, failSetup: Bool = false,
                             _ body: (Listener) async throws -> Void) async throws {
        try await withTeardown(try await Listener(log: log, pause: pause, failSetup: failSetup), { try await $0.close() }, body: body)
    }

    /// A plain blocking TCP connection to 127.0.0.1:`port` (completes in the kernel's backlog,
    /// accepted or not); the descriptor.
    static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(rc == 0)
        return fd
    }

    /// Polls `condition` until it holds; the bound is generous because the whole suite shares two
    /// cores (in a full run these tests took 9 s where alone they take 0.3 s).
    static func waitUntil(_ what: String, within seconds: Double = 60, _ condition: () async throws -> Bool) async throws {
        if try await !pollUntil(timeout: seconds, condition) { Issue.record("timed out after \(seconds) s waiting for \(what)") }
    }

    @Test("a failed accept (EMFILE) pauses accepting, logs once with the hint, and accepting resumes")
    func outOfDescriptors() async throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        try await Self.withListener(log: Logger(class: "TestListener", system: system), pause: .milliseconds(300)) { listener in
            #expect(try await listener.autoRead())

            // What NIO fires when accept4 fails for want of descriptors.
            listener.channel.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept4"))
            try await Self.waitUntil("autoRead off") { try await !listener.autoRead() }

            // A sender waiting in the backlog is served once the pause is over.
            let fd = Self.connect(port: listener.port)
            defer { close(fd) }
            try await Self.waitUntil("autoRead back on") { try await listener.autoRead() }
            try await Self.waitUntil("the waiting connection accepted") { listener.setUp.value.load(ordering: .relaxed) == 1 }

            #expect(system.flush())
            let errors = sink.records.filter { $0.level == .error }
            #expect(errors.count == 1)
            let record = try #require(errors.first)
            #expect(record.message.contains("127.0.0.1:\(listener.port): cannot accept connections"))
            #expect(record.message.contains("LimitNOFILE"))
            #expect(record.message.contains("pausing accepts for 300 ms"))
            #expect(record.fields["errno"] == .int(EMFILE))
            #expect(record.fields["failedAccepts"] == .int(1))

            // A listener that stays starved logs no line per failed accept: one a minute at most.
            for _ in 0..<3 { listener.channel.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept4")) }
            try await Self.waitUntil("autoRead off again") { try await !listener.autoRead() }
            #expect(system.flush())
            #expect(sink.records.filter { $0.level == .error }.count == 1)
        }
    }

    @Test("an accepted connection that cannot be set up is closed and logged; accepting goes on")
    func setupFailure() async throws {
        let (system, sink) = try MemoryLogSink.makeSystem()
        try await Self.withListener(log: Logger(class: "TestListener", system: system), pause: .seconds(1), failSetup: true) { listener in
            let fd = Self.connect(port: listener.port)
            defer { close(fd) }
            // The server closes it: a read sees EOF (bounded by a receive timeout).
            var timeout = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            #expect(read(fd, &byte, 1) == 0)

            try await Self.waitUntil("the log record") {
                _ = system.flush()
                return sink.records.contains { $0.level == .error && $0.message.contains("could not be set up and was closed") }
            }
            let record = try #require(sink.records.first { $0.level == .error })
            #expect(record.message.contains("Permission denied"))
            #expect(try await listener.autoRead(), "a setup failure does not pause accepting")
        }
    }
}
