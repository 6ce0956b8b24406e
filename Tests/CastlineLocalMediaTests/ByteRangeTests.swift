import CastlineLocalMedia
import Testing

/// `Range` parsing against a file size (RFC 9110 §14): every header form, the clamping rules,
/// empty files, overflow, and the `Content-Range` values the server sends.
@Suite("ByteRange")
struct ByteRangeTests {
    static let size: Int64 = 10_000

    @Test("no header → full")
    func absent() {
        #expect(ByteRange.parse(nil, size: Self.size) == .full)
        #expect(ByteRange.parse(nil, size: 0) == .full)
    }

    @Test("bytes=a-b → partial, inclusive", arguments: [
        ("bytes=0-0", 0...0), ("bytes=0-499", 0...499), ("bytes=500-999", 500...999),
        ("bytes=9999-9999", 9999...9999), ("bytes=0-9999", 0...9999),
    ] as [(String, ClosedRange<Int64>)])
    func closedRange(header: String, expected: ClosedRange<Int64>) {
        #expect(ByteRange.parse(header, size: Self.size) == .partial(expected))
    }

    @Test("bytes=a-b past the end is clamped to size-1")
    func clampedEnd() {
        #expect(ByteRange.parse("bytes=9000-20000", size: Self.size) == .partial(9000...9999))
        #expect(ByteRange.parse("bytes=0-99999999999999999999999", size: Self.size) == .partial(0...9999))
    }

    @Test("bytes=a- → from a to the end")
    func openEnded() {
        #expect(ByteRange.parse("bytes=0-", size: Self.size) == .partial(0...9999))
        #expect(ByteRange.parse("bytes=9990-", size: Self.size) == .partial(9990...9999))
        #expect(ByteRange.parse("bytes=9999-", size: Self.size) == .partial(9999...9999))
    }

    @Test("bytes=-n → the last n bytes; n past the size → the whole file as 206")
    func suffix() {
        #expect(ByteRange.parse("bytes=-500", size: Self.size) == .partial(9500...9999))
        #expect(ByteRange.parse("bytes=-1", size: Self.size) == .partial(9999...9999))
        #expect(ByteRange.parse("bytes=-10000", size: Self.size) == .partial(0...9999))
        #expect(ByteRange.parse("bytes=-20000", size: Self.size) == .partial(0...9999))
        #expect(ByteRange.parse("bytes=-99999999999999999999999", size: Self.size) == .partial(0...9999))
    }

    @Test("unsatisfiable: start at or past the end, suffix of 0", arguments: [
        "bytes=10000-", "bytes=10000-10005", "bytes=20000-30000", "bytes=-0", "bytes=99999999999999999999999-",
    ])
    func unsatisfiable(header: String) {
        #expect(ByteRange.parse(header, size: Self.size) == .unsatisfiable)
    }

    @Test("an empty file satisfies no range")
    func emptyFile() {
        for header in ["bytes=0-", "bytes=0-0", "bytes=-1", "bytes=-0", "bytes=5-10"] {
            #expect(ByteRange.parse(header, size: 0) == .unsatisfiable, "\(header)")
        }
        #expect(ByteRange.parse(nil, size: 0) == .full)
        #expect(ByteRange.parse("bytes=1-0", size: 0) == .malformed)
        #expect(ByteRange.parse("bytes=0-0", size: -5) == .unsatisfiable, "negative sizes count as empty")
    }

    @Test("a one-byte file")
    func oneByteFile() {
        #expect(ByteRange.parse("bytes=0-", size: 1) == .partial(0...0))
        #expect(ByteRange.parse("bytes=0-100", size: 1) == .partial(0...0))
        #expect(ByteRange.parse("bytes=-5", size: 1) == .partial(0...0))
        #expect(ByteRange.parse("bytes=1-", size: 1) == .unsatisfiable)
    }

    @Test("whitespace and unit case are tolerated", arguments: [
        "bytes=100-199", "Bytes=100-199", "BYTES=100-199", " bytes = 100 - 199 ", "bytes=\t100-199\t",
        "bytes=100-199,", "bytes=,100-199", "bytes= , 100-199 ,",
    ])
    func tolerant(header: String) {
        #expect(ByteRange.parse(header, size: Self.size) == .partial(100...199))
    }

    @Test("other units are ignored (full)", arguments: ["items=0-5", "none", "bytesx=0-5", "byte=0-5", "=0-5", ""])
    func otherUnits(header: String) {
        #expect(ByteRange.parse(header, size: Self.size) == .full)
    }

    @Test("broken bytes headers are malformed (served in full)", arguments: [
        "bytes", "bytes=", "bytes=,", "bytes=-", "bytes=--5", "bytes=5", "bytes=a-b", "bytes=1-2-3",
        "bytes=+1-5", "bytes=1-+5", "bytes=-+5", "bytes=5-1", "bytes=0x10-0x20", "bytes=1 0-20",
        "bytes=1-5,x", "bytes=1-5,7", "bytes=0-1;2-3", "bytes=１-2",
    ])
    func malformed(header: String) {
        #expect(ByteRange.parse(header, size: Self.size) == .malformed)
    }

    @Test("several ranges → full, unless none is satisfiable")
    func multipleRanges() {
        #expect(ByteRange.parse("bytes=0-1,5-6", size: Self.size) == .full)
        #expect(ByteRange.parse("bytes=0-1, -5", size: Self.size) == .full)
        #expect(ByteRange.parse("bytes=0-1,20000-", size: Self.size) == .full)
        #expect(ByteRange.parse("bytes=20000-,30000-", size: Self.size) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=-0,-0", size: Self.size) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,5-6", size: 0) == .unsatisfiable)
        #expect(ByteRange.parse("bytes=0-1,9-3", size: Self.size) == .malformed, "one invalid spec spoils the set")
    }

    @Test("Content-Range values and body lengths")
    func contentRange() {
        #expect(ByteRange.partial(1000...1999).contentRange(size: 300_000) == "bytes 1000-1999/300000")
        #expect(ByteRange.unsatisfiable.contentRange(size: 300_000) == "bytes */300000")
        #expect(ByteRange.unsatisfiable.contentRange(size: 0) == "bytes */0")
        #expect(ByteRange.full.contentRange(size: 5) == nil)
        #expect(ByteRange.malformed.contentRange(size: 5) == nil)
        #expect(ByteRange.partial(1000...1999).bodyLength(size: 300_000) == 1000)
        #expect(ByteRange.partial(0...0).bodyLength(size: 1) == 1)
        #expect(ByteRange.unsatisfiable.bodyLength(size: 300_000) == 0)
        #expect(ByteRange.full.bodyLength(size: 300_000) == 300_000)
        #expect(ByteRange.malformed.bodyLength(size: 7) == 7)
        #expect(ByteRange.full.bodyLength(size: -1) == 0)
    }

    @Test("every partial result lies inside the file", arguments: [0, 1, 2, 7, 100] as [Int64])
    func partialsInBounds(size: Int64) {
        let positions: [String] = ["", "0", "1", "2", "5", "6", "7", "99", "100", "101", "99999999999999999999"]
        for first in positions {
            for last in positions {
                let header = "bytes=\(first)-\(last)"
                switch ByteRange.parse(header, size: size) {
                case .partial(let range):
                    #expect(range.lowerBound >= 0 && range.upperBound < size, "\(header) on \(size) bytes → \(range)")
                case .unsatisfiable, .malformed:
                    break
                case .full:
                    Issue.record("\(header) on \(size) bytes → full")
                }
            }
        }
    }
}

@Suite("ServedFile in a folder")
struct ServedFolderTests {
    @Test("files of a published folder: plain names only, the type from the extension")
    func folder() {
        #expect(ServedFile.folderFileType("index.m3u8", folderType: "x/y") == "application/x-mpegURL")
        #expect(ServedFile.folderFileType("seg00001.m4s", folderType: "x/y") == "video/iso.segment")
        #expect(ServedFile.folderFileType("init.mp4", folderType: "x/y") == "video/mp4")
        #expect(ServedFile.folderFileType("notes.bin", folderType: "x/y") == "x/y")
        #expect(ServedFile.isPlainLeaf("seg00001.m4s"))
        for bad in ["..", ".hidden", "", "a b.m4s", "a/b", "a%2F"] {
            #expect(!ServedFile.isPlainLeaf(Substring(bad)), "\(bad)")
        }
    }
}
