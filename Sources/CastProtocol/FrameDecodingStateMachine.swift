import NIOCore

/// Splits a byte stream into Cast frame bodies. Pure: no channel, no I/O; driven by
/// ``CastFrameDecoder`` and directly by tests.
///
/// The length prefix is checked as soon as its 4 bytes arrive, so an oversized frame is refused
/// before any of its body is buffered. After an error the machine stays failed.
public struct FrameDecodingStateMachine: Sendable {
    private var buffer: ByteBuffer?
    private var failure: CastFrameError?
    public let maxBodySize: Int

    public init(maxBodySize: Int = CastFrameLimits.maxBodySize) {
        self.maxBodySize = maxBodySize
    }

    /// Bytes received but not yet returned as a frame.
    public var bufferedBytes: Int { buffer?.readableBytes ?? 0 }

    /// Appends received bytes.
    public mutating func feed(_ bytes: ByteBuffer) {
        guard failure == nil else { return }
        if buffer == nil || buffer!.readableBytes == 0 {
            buffer = bytes
        } else {
            var incoming = bytes
            buffer!.writeBuffer(&incoming)
        }
    }

    /// The next complete frame body, nil if more bytes are needed.
    public mutating func nextFrame() throws(CastFrameError) -> ByteBuffer? {
        if let failure { throw failure }
        // The buffer is read in place (`buffer!`), not copied out and stored back: no retain and
        // release of its storage per frame.
        guard buffer != nil, let length = Self.lengthPrefix(buffer!) else { return nil }
        if let refusal = CastFrameLimits.refusal(size: Int(length), limit: maxBodySize) { return try fail(refusal) }
        guard buffer!.readableBytes >= CastFrameLimits.headerSize + Int(length) else { return nil }
        buffer!.moveReaderIndex(forwardBy: CastFrameLimits.headerSize)
        let body = buffer!.readSlice(length: Int(length))!
        if buffer!.readableBytes == 0 {
            buffer = nil
        } else if buffer!.readerIndex > 64 * 1024 {
            buffer!.discardReadBytes()
        }
        return body
    }

    /// Called at end of stream: an error if a partial frame is left. Whole frames still buffered
    /// (the stream ended while an earlier frame was being handled, e.g. a handler closed the
    /// connection) are not a truncation: their number is returned.
    @discardableResult
    public func finish() throws(CastFrameError) -> Int {
        if let failure { throw failure }
        guard let buf = buffer, buf.readableBytes > 0 else { return 0 }
        var offset = buf.readerIndex
        var wholeFrames = 0
        while let length = buf.getInteger(at: offset, endianness: .big, as: UInt32.self), length > 0, length <= UInt32(maxBodySize),
              buf.writerIndex - offset >= CastFrameLimits.headerSize + Int(length) {
            offset += CastFrameLimits.headerSize + Int(length)
            wholeFrames += 1
        }
        let left = buf.writerIndex - offset
        guard left > 0 else { return wholeFrames }
        let expected = buf.getInteger(at: offset, endianness: .big, as: UInt32.self).map { Int($0) + CastFrameLimits.headerSize }
        throw .truncated(expected: expected ?? CastFrameLimits.headerSize, received: left)
    }

    /// The 4-byte big-endian length at the reader index, nil before 4 bytes are there (one
    /// unaligned load; NIO's generic `getInteger` costs several times more per frame).
    @inline(__always)
    static func lengthPrefix(_ buffer: ByteBuffer) -> UInt32? {
        guard buffer.readableBytes >= CastFrameLimits.headerSize else { return nil }
        return buffer.withUnsafeReadableBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    private mutating func fail(_ error: CastFrameError) throws(CastFrameError) -> ByteBuffer? {
        failure = error
        buffer = nil
        throw error
    }
}
