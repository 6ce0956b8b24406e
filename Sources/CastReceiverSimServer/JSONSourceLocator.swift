/// Maps JSON paths (`apps[0].namespaces[1]`) to `line:column` in the text they came from, so a
/// configuration error can point at the offending value like a compiler does.
///
/// Built from text that already parsed as JSON; a plain scanner, no validation.
struct JSONSourceLocator {
    private var positions: [String: Int] = [:]
    private let lineStarts: [Int]

    init(text: String) {
        let bytes = Array(text.utf8)
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { starts.append(offset + 1) }
        lineStarts = starts
        var scanner = Scanner(bytes: bytes)
        scanner.value(path: "")
        positions = scanner.positions
    }

    /// `line:column` (1-based) of the value at `path`, or of its closest located parent.
    func location(of path: String) -> (line: Int, column: Int) {
        var key = path
        while positions[key] == nil, !key.isEmpty {
            if let cut = key.lastIndex(where: { $0 == "." || $0 == "[" }) { key = String(key[..<cut]) } else { key = "" }
        }
        return location(ofOffset: positions[key] ?? 0)
    }

    /// `line:column` (1-based) of a byte offset.
    func location(ofOffset offset: Int) -> (line: Int, column: Int) {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return (low + 1, offset - lineStarts[low] + 1)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var positions: [String: Int] = [:]

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value(path: String) {
            skipSpace()
            guard index < bytes.count else { return }
            positions[path] = index
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                while true {
                    skipSpace()
                    guard index < bytes.count else { return }
                    if bytes[index] == UInt8(ascii: "}") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    let keyStart = index
                    let key = string()
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: ":") { index += 1 }
                    let childPath = path.isEmpty ? key : "\(path).\(key)"
                    positions[childPath + "#key"] = keyStart
                    value(path: childPath)
                }
            case UInt8(ascii: "["):
                index += 1
                var element = 0
                while true {
                    skipSpace()
                    guard index < bytes.count else { return }
                    if bytes[index] == UInt8(ascii: "]") { index += 1; return }
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    value(path: "\(path)[\(element)]")
                    element += 1
                }
            case UInt8(ascii: "\""):
                _ = string()
            default:
                while index < bytes.count, !",]} \t\r\n".utf8.contains(bytes[index]) { index += 1 }
            }
        }

        /// Reads a string literal; returns its raw contents (escapes kept, enough for keys).
        mutating func string() -> String {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return "" }
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            let text = String(decoding: bytes[start..<min(index, bytes.count)], as: UTF8.self)
            index += 1
            return text
        }
    }
}
