import CastCore
import CastLogging
import NIOCore

/// Duplex pass-through handler that turns every ``CastMessage`` in or out into a log record of
/// class `CastChannel.<namespace tail>` (e.g. `CastChannel.com.google.cast.tp.heartbeat`).
///
/// Records are at `debug` with fields `direction` (in/out), `peer`, `source`, `destination`,
/// `namespace`, `type`, `requestId` (when present) and `bytes`; the payload text is added as the
/// `payload` field (credentials redacted: ``PayloadRedaction``) only when the class is at `verbose`. Nothing is parsed when the class is
/// filtered out. Place it after ``CastMessageCodec``. Runs on the channel's event loop.
public final class CastTrafficLogHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = CastMessage
    public typealias InboundOut = CastMessage
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = CastMessage

    private let logSystem: LogSystem
    private var loggers: [CastNamespace: Logger] = [:]

    public init(logSystem: LogSystem = .shared) {
        self.logSystem = logSystem
    }

    /// The log class of a namespace's traffic.
    public static func className(for namespace: CastNamespace) -> String { "CastChannel." + namespace.tail }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        record(unwrapInboundIn(data), direction: "in", context: context)
        context.fireChannelRead(data)
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        record(unwrapOutboundIn(data), direction: "out", context: context)
        context.write(data, promise: promise)
    }

    /// The logger of the previous message's namespace: most messages of a connection are on the
    /// namespace of the one before (heartbeats, a media session's statuses), and comparing two
    /// namespaces that share their storage costs less than hashing one.
    private var recent: (namespace: CastNamespace, logger: Logger)?

    private func logger(for namespace: CastNamespace) -> Logger {
        if let recent, recent.namespace == namespace { return recent.logger }
        let l: Logger
        if let known = loggers[namespace] {
            l = known
        } else {
            l = Logger(class: CastTrafficLogHandler.className(for: namespace), system: logSystem)
            loggers[namespace] = l
        }
        recent = (namespace, l)
        return l
    }

    private func record(_ message: CastMessage, direction: String, context: ChannelHandlerContext) {
        let log = logger(for: message.namespace)
        guard log.isEnabled(.debug) else { return }
        let summary = CastTrafficLogHandler.summary(of: message)
        var fields: LogFields = [
            "direction": .string(direction), "peer": .string(SocketAddress.logDescription(context.channel.remoteAddress)),
            "local": .string(SocketAddress.logDescription(context.channel.localAddress)),
            "source": .string(message.sourceID), "destination": .string(message.destinationID),
            "namespace": .string(message.namespace.rawValue), "bytes": .int(message.payload.byteCount),
        ]
        if let type = summary.type { fields["type"] = .string(type) }
        if let requestID = summary.requestID { fields["requestId"] = .int(requestID) }
        if log.isEnabled(.verbose) {
            switch message.payload {
            case .string(let text): fields["payload"] = .string(PayloadRedaction.redacted(text: text))
            case .binary(let bytes): fields["payload"] = .string("<\(bytes.count) binary bytes>")
            }
        }
        let arrow = direction == "in" ? "← \(message.sourceID)" : "→ \(message.destinationID)"
        let what = summary.type ?? (message.payload.text == nil ? "binary" : "message")
        let id = summary.requestID.map { " #\($0)" } ?? ""
        log.debug("\(arrow) \(what)\(id) (\(message.payload.byteCount) B)", fields)
    }

    /// `type` (or openscreen's `responseType`) and `requestId` of a JSON payload.
    static func summary(of message: CastMessage) -> (type: String?, requestID: Int64?) {
        guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text) else { return (nil, nil) }
        let type = json["type"]?.string ?? json["responseType"]?.string
        return (type, json["requestId"]?.int)
    }
}
