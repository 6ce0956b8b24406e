#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The models match member keys and message types through `JSONMemberKey`, byte for byte
/// (`switch key { case "playerState": … }`, `switch JSONStringKey(type) { … }`). The hand-written
/// `switch (key.utf8.count, key) { case (11, "playerState"): … }` form, whose lengths needed a
/// lint of their own, must not come back.
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

    @Test func noSwitchOnHandTypedKeyLengths() throws {
        let files = Self.swiftFiles(in: Self.sourceDirectory)
        try #require(!files.isEmpty, "CastCore sources not found at \(Self.sourceDirectory)")
        for file in files {
            let source = try #require(Self.read(file))
            for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("switch (") && line.contains(".utf8.count,") {
                Issue.record("\(file):\(index + 1): match the key as a JSONMemberKey instead: \(line)")
            }
        }
    }
}
