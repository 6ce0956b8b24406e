import CastProtocol
import NIOCore
import Testing

@Suite struct FrameDecodingStateMachineTests {
    static func frame(_ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
    }

    static let bodies: [[UInt8]] = [
        Array("first".utf8), [0x00], Array(repeating: 0xAB, count: 300), Array(0...255).map(UInt8.init),
    ]

    func decodeAll(_ chunks: [[UInt8]]) throws -> [[UInt8]] {
        var machine = FrameDecodingStateMachine()
        var out: [[UInt8]] = []
        for chunk in chunks {
            machine.feed(ByteBuffer(bytes: chunk))
            while let body = try machine.nextFrame() { out.append(Array(body.readableBytesView)) }
        }
        try machine.finish()
        return out
    }

    @Test func dripFedBytesDecodeIdenticallyToOneChunk() throws {
        let stream = Self.bodies.flatMap(Self.frame)
        let whole = try decodeAll([stream])
        let dripped = try decodeAll(stream.map { [$0] })
        #expect(whole == Self.bodies)
        #expect(dripped == Self.bodies)
        // Every split point of the stream into two chunks, too.
        for cut in 0...stream.count {
            #expect(try decodeAll([Array(stream[..<cut]), Array(stream[cut...])]) == Self.bodies)
        }
    }

    @Test func bodyOfExactlyTheLimitIsAccepted() throws {
        let body = [UInt8](repeating: 7, count: CastFrameLimits.maxBodySize)
        #expect(try decodeAll([Self.frame(body)]) == [body])
    }

    @Test func oversizedLengthFailsBeforeTheBodyArrives() {
        var machine = FrameDecodingStateMachine()
        machine.feed(ByteBuffer(bytes: [0x00, 0x01, 0x00, 0x01]))  // 65,537
        #expect(throws: CastFrameError.bodyTooLarge(size: 65_537, limit: 65_536)) { try machine.nextFrame() }
        #expect(machine.bufferedBytes == 0)
        // It stays failed, whatever comes next.
        machine.feed(ByteBuffer(bytes: Self.frame([1, 2, 3])))
        #expect(throws: CastFrameError.self) { try machine.nextFrame() }
    }

    @Test func hugeLengthIsRefused() {
        var machine = FrameDecodingStateMachine()
        machine.feed(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0xFF]))
        #expect(throws: CastFrameError.bodyTooLarge(size: UInt32.max, limit: 65_536)) { try machine.nextFrame() }
    }

    @Test func zeroLengthIsAnError() {
        var machine = FrameDecodingStateMachine()
        machine.feed(ByteBuffer(bytes: Self.frame([9]) + [0, 0, 0, 0]))
        #expect(try! machine.nextFrame().map { Array($0.readableBytesView) } == [9])
        #expect(throws: CastFrameError.emptyBody) { try machine.nextFrame() }
    }

    @Test func endOfStreamInsideAFrameIsReported() {
        var machine = FrameDecodingStateMachine()
        machine.feed(ByteBuffer(bytes: [0, 0, 0, 10, 1, 2]))
        #expect(try! machine.nextFrame() == nil)
        #expect(throws: CastFrameError.truncated(expected: 14, received: 6)) { try machine.finish() }
    }

    /// The stream ends while whole frames wait (a handler closed the connection while an earlier
    /// frame of the same read was handled): not a truncation; a partial frame after them is,
    /// with the partial frame's own sizes.
    @Test func wholeFramesLeftAtEndOfStreamAreCountedNotReportedAsTruncated() throws {
        var machine = FrameDecodingStateMachine()
        machine.feed(ByteBuffer(bytes: Self.frame([1]) + Self.frame([2, 3]) + Self.frame(Array(repeating: 7, count: 101))))
        #expect(try machine.nextFrame().map { Array($0.readableBytesView) } == [1])
        #expect(try machine.finish() == 2)

        var partial = FrameDecodingStateMachine()
        partial.feed(ByteBuffer(bytes: Self.frame([1]) + Self.frame([2, 3]) + [0, 0, 0, 10, 1, 2]))
        #expect(throws: CastFrameError.truncated(expected: 14, received: 6)) { try partial.finish() }
        #expect(try FrameDecodingStateMachine().finish() == 0)
    }
}
