import CastHTTP
import Glibc
import CastCore
import CastProtocol
import CastLogging
import NIOCore
import NIOPosix

/// The simulator's local control socket: a Unix stream socket speaking JSON lines. Each line is
/// one ``SimulatorControl`` command; each answer is one line. A line over 1 MiB is refused and
/// the connection closed. The socket file is created 0600 and removed on shutdown.
final class ControlSocketServer: Sendable {
    let path: String
    private let channel: Channel

    private init(path: String, channel: Channel) {
        self.path = path
        self.channel = channel
    }

    static func start(path: String, control: SimulatorControl, group: EventLoopGroup, logSystem: LogSystem)
        -> EventLoopFuture<ControlSocketServer> {
        let log = Logger(class: "ControlSocketServer", system: logSystem)
        let previous = umask(0o177)
        let bound = ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ControlLineHandler(control: control, log: log))
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .flatMap { $0.addListenerErrorHandler(log: log) }
        umask(previous)
        return bound.map { channel in
            log.info("control socket listening at \(path)", ["path": .string(path)])
            return ControlSocketServer(path: path, channel: channel)
        }.flatMapErrorThrowing { error in
            throw SimulatorError.io("cannot listen on control socket \(path): \(error)")
        }
    }

    func stop() -> EventLoopFuture<Void> {
        let path = self.path
        return channel.close().recover { _ in }.map { unlink(path) ; return () }
    }
}

/// One control connection: splits lines, runs commands in order, writes one reply line each.
private final class ControlLineHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let maxLine = 1 << 20
    private let control: SimulatorControl
    private let log: Logger
    private var pending: [UInt8] = []
    private var queue: EventLoopFuture<Void>?

    init(control: SimulatorControl, log: Logger) {
        self.control = control
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: pending[..<newline], as: UTF8.self)
            pending.removeSubrange(...newline)
            if line.allSatisfy({ $0 == " " || $0 == "\r" || $0 == "\t" }) { continue }
            run(line, context: context)
        }
        if pending.count > Self.maxLine {
            log.warning("control line over \(Self.maxLine) bytes: closing")
            Self.reply(SimulatorControl.failure("line longer than \(Self.maxLine) bytes"), on: context.channel)
            pending = []
            context.close(promise: nil)
        }
    }

    private func run(_ line: String, context: ChannelHandlerContext) {
        let loop = context.eventLoop
        let previous = queue ?? loop.makeSucceededVoidFuture()
        let control = self.control
        let channel = context.channel
        queue = previous.flatMap { control.execute(text: line).hop(to: loop) }.map { answer in
            Self.reply(answer, on: channel)
        }
    }

    /// Writes one answer line (this handler is last in the pipeline, so the channel's write path is its own).
    private static func reply(_ answer: JSONValue, on channel: Channel) {
        guard channel.isActive else { return }
        var bytes = answer.serializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
    }
}
