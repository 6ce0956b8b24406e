@testable import CastReceiverSimServer
import NIOCore
import Testing

/// The record rewriting itself: runs of plaintext handshake records merge, other records and
/// everything after a ChangeCipherSpec pass unchanged, a merged run splits at 2^14 bytes.
@Suite("Handshake record coalescer")
struct HandshakeRecordCoalescerTests {
    static func record(_ type: UInt8, _ body: [UInt8], version: UInt16 = 0x0303) -> [UInt8] {
        [type, UInt8(version >> 8), UInt8(version & 0xFF), UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }

    static func run(_ bytes: [UInt8]) -> ([UInt8], Int, Int, Bool) {
        let (output, records, ccs) = HandshakeRecordCoalescer.coalesce(ByteBuffer(bytes: bytes), allocator: ByteBufferAllocator())
        return (Array(output.readableBytesView), records.before, records.after, ccs)
    }

    @Test("four handshake records become one with the bodies in order")
    func merges() {
        let input = Self.record(22, [2, 0, 0, 1, 9]) + Self.record(22, [11, 0, 0, 2, 8, 8]) + Self.record(22, [14, 0, 0, 0])
        let (output, before, after, ccs) = Self.run(input)
        #expect(output == Self.record(22, [2, 0, 0, 1, 9, 11, 0, 0, 2, 8, 8, 14, 0, 0, 0]))
        #expect((before, after, ccs) == (3, 1, false))
    }

    @Test("after a ChangeCipherSpec nothing is merged; an alert between handshake records splits the run")
    func stopsAtChangeCipherSpec() {
        let input = Self.record(22, [1]) + Self.record(21, [2, 40]) + Self.record(22, [3]) + Self.record(20, [1])
            + Self.record(22, [0xAA]) + Self.record(22, [0xBB])
        let (output, _, _, ccs) = Self.run(input)
        #expect(output == input)
        #expect(ccs)
    }

    @Test("a run longer than 2^14 bytes is split into full records; a trailing partial record is kept as is")
    func splits() {
        let big = [UInt8](repeating: 7, count: 10_000)
        let partial: [UInt8] = [22, 3, 3, 0, 9, 1]
        let (output, before, after, _) = Self.run(Self.record(22, big) + Self.record(22, big) + partial)
        let merged = big + big
        #expect(output == Self.record(22, Array(merged[..<16_384])) + Self.record(22, Array(merged[16_384...])) + partial)
        #expect((before, after) == (2, 2))
    }
}
