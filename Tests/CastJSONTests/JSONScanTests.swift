@testable import CastJSON
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `JSONBytes.copyPlain`, the writer's word-at-a-time scan, against a byte-by-byte reference:
/// every length up to 70, every position of every byte that needs an escape and of its
/// neighbours that do not, the source ending at a page followed by an inaccessible page (a read
/// past the string would crash the test), and guard bytes right after the string's length.
@Suite struct JSONScanTests {
    static let escaped: [UInt8] = [0x00, 0x01, 0x0A, 0x1F, 0x22, 0x5C]
    static let plainNeighbours: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]

    /// A source buffer whose last byte is the last byte of a readable page.
    final class PageEndBuffer {
        let region: UnsafeMutableRawPointer
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

        init() throws {
            let raw = mmap(nil, 2 * pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let raw, raw != MAP_FAILED else { throw ScanTestError.mmap }
            region = raw
            guard mprotect(region + pageSize, pageSize, PROT_NONE) == 0 else { throw ScanTestError.mmap }
        }

        deinit { munmap(region, 2 * pageSize) }

        /// Copies `bytes` so that they end at the protected page.
        func place(_ bytes: [UInt8]) -> UnsafePointer<UInt8> {
            let start = (region + pageSize - bytes.count).assumingMemoryBound(to: UInt8.self)
            start.update(from: bytes, count: bytes.count)
            return UnsafePointer(start)
        }
    }

    enum ScanTestError: Error { case mmap }

    static func reference(_ bytes: [UInt8], quotesAndBackslashes: Bool) -> Int {
        bytes.firstIndex { $0 < 0x20 || (quotesAndBackslashes && ($0 == 0x22 || $0 == 0x5C)) } ?? bytes.count
    }

    /// Runs the scan in both modes; checks the count, the copied prefix and that nothing past
    /// the string's length changed.
    static func check(_ bytes: [UInt8], _ source: PageEndBuffer) {
        let guardLength = 32
        let src = source.place(bytes)
        for quotesAndBackslashes in [true, false] {
            var destination = [UInt8](repeating: 0xAA, count: bytes.count + guardLength)
            let copied = destination.withUnsafeMutableBufferPointer {
                JSONBytes.copyPlain($0.baseAddress!, src, bytes.count, quotesAndBackslashes: quotesAndBackslashes)
            }
            let expected = reference(bytes, quotesAndBackslashes: quotesAndBackslashes)
            #expect(copied == expected, "length \(bytes.count): \(bytes)")
            #expect(Array(destination[..<min(copied, expected)]) == Array(bytes[..<min(copied, expected)]), "prefix of \(bytes)")
            #expect(destination[bytes.count...].allSatisfy { $0 == 0xAA }, "wrote past the string for length \(bytes.count)")
        }
    }

    @Test func plainStringsOfEveryLengthAreCopiedWhole() throws {
        let source = try PageEndBuffer()
        for length in 0...70 {
            for filler in Self.plainNeighbours + [UInt8(ascii: "a")] {
                Self.check([UInt8](repeating: filler, count: length), source)
            }
            Self.check((0..<length).map { UInt8(0x20 + $0 % 0x5F) }.map { $0 == 0x22 || $0 == 0x5C ? 0x41 : $0 }, source)
        }
    }

    @Test func theFirstEscapeIsFoundAtEveryPosition() throws {
        let source = try PageEndBuffer()
        for length in 1...70 {
            for position in 0..<length {
                for byte in Self.escaped {
                    var bytes = (0..<length).map { UInt8(0x61 + $0 % 26) }
                    bytes[position] = byte
                    Self.check(bytes, source)
                    // A second escape later on does not change the answer.
                    if position + 1 < length {
                        bytes[length - 1] = 0x22
                        Self.check(bytes, source)
                    }
                }
                for byte in Self.plainNeighbours {
                    var bytes = (0..<length).map { UInt8(0x61 + $0 % 26) }
                    bytes[position] = byte
                    Self.check(bytes, source)
                }
            }
        }
    }
}
