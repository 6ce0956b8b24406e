import CastLogging
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The last handler on a listening socket (the simulator's devices and its control socket, the
/// media file server, the control API's Unix socket and TCP listener): what NIO reports there is
/// logged, never dropped unseen. Two kinds reach it:
/// - an accepted connection that could not be set up: NIO closes it and the peer sees only EOF;
/// - an accept that failed for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM). The connection
///   stays in the backlog and NIO's listener stays readable, so it would retry at once, at full
///   CPU, logging each time (NIO's `AcceptBackoffHandler` cannot stop that loop: it only delays
///   the *next* read, and a failed accept leaves the current one pending). This handler stops
///   accepting for `pause` (autoRead off), logs once, and then accepts again: the peers
///   waiting in the backlog are served once descriptors are free.
package final class ListenerErrorHandler: ChannelInboundHandler {
    package typealias InboundIn = NIOAny

    private let log: Logger
    private let listener: String
    private let pause: TimeAmount
    private var failedAccepts = 0
    /// A starved listener logs one line, then one a minute with the count.
    private var reports = ReportThrottle()

    /// `listener`: how the log names the socket (`127.0.0.1:8009`, a UNIX socket's path).
    package init(log: Logger, listener: String, pause: TimeAmount = .seconds(1)) {
        self.log = log
        self.listener = listener
        self.pause = pause
    }

    package func errorCaught(context: ChannelHandlerContext, error: Error) {
        let code = (error as? IOError)?.errnoCode
        guard let code, [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(code) else {
            log.error("\(listener): an accepted connection could not be set up and was closed: \(error)", [
                "listener": .string(listener), "reason": .string("\(error)"),
            ])
            return
        }
        failedAccepts += 1
        if let unreported = reports.occurrence(now: Double(NIODeadline.now().uptimeNanoseconds) / 1e9) {
            let hint = DescriptorShortage.hint(errno: code).map { " (\($0))" } ?? ""
            let since = unreported > 0 ? "; \(unreported) more failed accepts since the last report" : ""
            log.error("\(listener): cannot accept connections: \(error)\(hint); pausing accepts for \(pause.nanoseconds / 1_000_000) ms each time\(since)", [
                "listener": .string(listener), "reason": .string("\(error)"), "errno": .int(code), "failedAccepts": .int(failedAccepts),
            ])
        }
        guard let options = context.channel.syncOptions, (try? options.setOption(.autoRead, value: false)) != nil else { return }
        context.eventLoop.assumeIsolated().scheduleTask(in: pause) {
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }
}

extension Channel {
    /// Adds a ``ListenerErrorHandler`` at the end of this listening channel's pipeline (after
    /// NIO's accept handler, so it also sees connections that could not be set up). Call it on
    /// the channel `bind` returned.
    package func addListenerErrorHandler(log: Logger, pause: TimeAmount = .seconds(1)) -> EventLoopFuture<Channel> {
        eventLoop.makeCompletedFuture {
            let name = localAddress.map { address in
                address.port.map { "\(address.ipAddress ?? "?"):\($0)" } ?? address.pathname ?? "\(address)"
            } ?? "?"
            try pipeline.syncOperations.addHandler(ListenerErrorHandler(log: log, listener: name, pause: pause))
            return self
        }
    }
}
