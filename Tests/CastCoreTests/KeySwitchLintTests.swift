#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The models switch on `(key.utf8.count, key)` so that a mismatching key is rejected by one
/// integer compare instead of a string compare. This test keeps the hand-written lengths honest:
/// every `case (N, "literal")` line in the CastCore sources must have N == the literal's UTF-8 length.
@Suite("Source lint")
struct KeySwitchLintTests {
    static var sourceDirectory: String {
        // …/Tests/CastCoreTests/KeySwitchLintTests.swift → …/Sources/CastCore
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/") + "/Sources/CastCore"
    }

    static func swiftFiles(in directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".swift") { names.append(directory + "/" + name) }
        }
        return names.sorted()
    }

    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Every `(digits, "text")` occurrence in `source` (one `case` line).
    static func lengthPatterns(in source: String) -> [(length: Int, literal: String)] {
        var result: [(Int, String)] = []
        let bytes = Array(source.utf8)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "(") else { index += 1; continue }
            var cursor = index + 1
            var number = 0
            var digits = 0
            while cursor < bytes.count, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39 {
                number = number * 10 + Int(bytes[cursor] - 0x30)
                digits += 1
                cursor += 1
            }
            guard digits > 0, cursor + 3 < bytes.count, bytes[cursor] == UInt8(ascii: ","),
                  bytes[cursor + 1] == UInt8(ascii: " "), bytes[cursor + 2] == UInt8(ascii: "\"") else {
                index += 1
                continue
            }
            var end = cursor + 3
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            if end + 1 < bytes.count, bytes[end + 1] == UInt8(ascii: ")") {
                result.append((number, String(decoding: bytes[(cursor + 3)..<end], as: UTF8.self)))
            }
            index = end
        }
        return result
    }

    @Test func keyLengthsMatchLiterals() throws {
        let files = Self.swiftFiles(in: Self.sourceDirectory)
        try #require(!files.isEmpty, "CastCore sources not found at \(Self.sourceDirectory)")
        var checked = 0
        for file in files {
            let source = try #require(Self.read(file))
            let caseLines = source.split(separator: "\n").filter { $0.drop { $0 == " " }.hasPrefix("case (") }
            for pattern in caseLines.flatMap({ Self.lengthPatterns(in: String($0)) }) {
                checked += 1
                #expect(pattern.length == pattern.literal.utf8.count, "\(file): (\(pattern.length), \"\(pattern.literal)\")")
            }
        }
        #expect(checked > 150)
    }
}
