import CastCore
import NIOCore

/// One Cast message as a JSON-lines record, in the shape the simulator's frame log and
/// `castline capture` share: `direction`, `source`, `destination`, `namespace`, `bytes`, `type`
/// and `requestId` when the payload names them, then `payload` (JSON embedded parsed, secrets
/// redacted unless `redact` is false; other text as a string with `invalidJSON`) or `binary`
/// (base64). The caller adds `time`, `event` and its own context fields.
public enum CastFrameRecord {
    public static func fields(of message: CastMessage, direction: String, redact: Bool = true) -> JSONObject {
        var object = JSONObject()
        object.set("direction", .string(direction))
        object.set("source", .string(message.sourceID))
        object.set("destination", .string(message.destinationID))
        object.set("namespace", .string(message.namespace.rawValue))
        object.set("bytes", .int(Int64(message.payload.byteCount)))
        switch message.payload {
        case .string(let text):
            if let json = try? JSONValue.parse(text) {
                if let type = json["type"]?.string ?? json["responseType"]?.string { object.set("type", .string(type)) }
                if let id = json["requestId"]?.int { object.set("requestId", .int(id)) }
                object.set("payload", redact ? PayloadRedaction.redacted(json) : json)
            } else {
                object.set("payload", .string(text))
                object.set("invalidJSON", true)
            }
        case .binary(let bytes):
            object.set("binary", .string(Base64.encode(bytes)))
        }
        return object
    }
}

/// What a ``CastFrameObserver`` hears.
public enum CastFrameEvent: Sendable {
    /// A message received (`inbound`) or sent.
    case frame(CastMessage, inbound: Bool)
    /// The connection closed (either side, or a network failure).
    case closed
}

/// Hears every ``CastMessage`` a connection receives or sends, and its end, on the
/// connection's event loop: keep it short. `castline capture` records through it.
public typealias CastFrameObserver = @Sendable (CastFrameEvent) -> Void

/// Pass-through handler that hands every message in and out to a ``CastFrameObserver``. Placed
/// right after the codec, so what it sees is what crossed the wire.
public final class CastFrameTapHandler: ChannelDuplexHandler, RemovableChannelHandler {
    public typealias InboundIn = CastMessage
    public typealias InboundOut = CastMessage
    public typealias OutboundIn = CastMessage
    public typealias OutboundOut = CastMessage

    private let observer: CastFrameObserver

    public init(observer: @escaping CastFrameObserver) { self.observer = observer }

    public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        observer(.frame(unwrapInboundIn(data), inbound: true))
        context.fireChannelRead(data)
    }

    public func channelInactive(context: ChannelHandlerContext) {
        observer(.closed)
        context.fireChannelInactive()
    }

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        observer(.frame(unwrapOutboundIn(data), inbound: false))
        context.write(data, promise: promise)
    }
}
