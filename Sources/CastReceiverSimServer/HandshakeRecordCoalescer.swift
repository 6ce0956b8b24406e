import CastLogging
import NIOCore

/// Packs the server's plaintext handshake flight into one TLS record, as Cast devices send it
/// (ServerHello, Certificate, ServerKeyExchange, ServerHelloDone in one record: node-castv2#25).
/// BoringSSL in TLS 1.2 writes one record per handshake message.
///
/// Sits on the network side of `NIOSSLServerHandler`. Until the server's ChangeCipherSpec, the
/// bytes written before a flush are held; at the flush, each run of consecutive handshake
/// records (content type 22) becomes one record of the same version (split at 2^14 bytes, the
/// TLS limit), every other record passes unchanged. Handshake messages may span or share records
/// freely while unencrypted (RFC 5246 §6.2.1), so the peer sees the same messages. After the
/// ChangeCipherSpec records are encrypted and pass untouched, and the handler removes itself.
final class HandshakeRecordCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let handshake: UInt8 = 22
    static let changeCipherSpec: UInt8 = 20
    static let maximumFragment = 1 << 14

    private var held: ByteBuffer?
    private var promises: [EventLoopPromise<Void>] = []
    private let log: Logger

    init(log: Logger) { self.log = log }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var buffer = unwrapOutboundIn(data)
        if held == nil { held = buffer } else { held!.writeBuffer(&buffer) }
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {
        guard let bytes = held else { context.flush(); return }
        held = nil
        let (output, records, sawChangeCipherSpec) = Self.coalesce(bytes, allocator: context.channel.allocator)
        let promise: EventLoopPromise<Void>? = promises.isEmpty ? nil : context.eventLoop.makePromise()
        if let promise { for waiting in promises { promise.futureResult.cascade(to: waiting) } }
        promises = []
        log.verbose("server flight: \(records.before) records sent as \(records.after)", [
            "recordsIn": .int(records.before), "recordsOut": .int(records.after),
        ])
        context.writeAndFlush(wrapOutboundOut(output), promise: promise)
        if sawChangeCipherSpec { context.pipeline.syncOperations.removeHandler(self, promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Bytes held without a flush (the channel closing) still go out, in order.
        if let bytes = held {
            held = nil
            let promise: EventLoopPromise<Void>? = promises.isEmpty ? nil : context.eventLoop.makePromise()
            if let promise { for waiting in promises { promise.futureResult.cascade(to: waiting) } }
            promises = []
            context.write(wrapOutboundOut(bytes), promise: promise)
        }
    }

    /// `bytes` with each run of consecutive handshake records before the first ChangeCipherSpec
    /// merged; the record counts before and after; whether a ChangeCipherSpec was in `bytes`.
    /// Anything after a ChangeCipherSpec, and a trailing partial record, is copied as it is.
    static func coalesce(_ bytes: ByteBuffer, allocator: ByteBufferAllocator)
        -> (ByteBuffer, records: (before: Int, after: Int), sawChangeCipherSpec: Bool) {
        var input = bytes
        var output = allocator.buffer(capacity: input.readableBytes)
        var run: [UInt8] = []
        var runVersion: UInt16 = 0
        var before = 0
        var after = 0
        var sawChangeCipherSpec = false

        func flushRun() {
            var offset = 0
            while offset < run.count {
                let end = min(run.count, offset + maximumFragment)
                output.writeInteger(handshake)
                output.writeInteger(runVersion)
                output.writeInteger(UInt16(end - offset))
                output.writeBytes(run[offset..<end])
                after += 1
                offset = end
            }
            run.removeAll(keepingCapacity: true)
        }

        while !sawChangeCipherSpec, input.readableBytes >= 5,
              let type = input.getInteger(at: input.readerIndex, as: UInt8.self),
              let version = input.getInteger(at: input.readerIndex + 1, as: UInt16.self),
              let length = input.getInteger(at: input.readerIndex + 3, as: UInt16.self),
              input.readableBytes >= 5 + Int(length) {
            before += 1
            if type == handshake && (run.isEmpty || version == runVersion) {
                runVersion = version
                input.moveReaderIndex(forwardBy: 5)
                run += input.readBytes(length: Int(length)) ?? []
                continue
            }
            flushRun()
            if type == handshake {
                // A handshake record of another version starts a run of its own.
                runVersion = version
                input.moveReaderIndex(forwardBy: 5)
                run += input.readBytes(length: Int(length)) ?? []
                continue
            }
            var record = input.readSlice(length: 5 + Int(length))!
            output.writeBuffer(&record)
            after += 1
            if type == changeCipherSpec { sawChangeCipherSpec = true }
        }
        flushRun()
        output.writeBuffer(&input)
        return (output, (before, after), sawChangeCipherSpec)
    }
}
