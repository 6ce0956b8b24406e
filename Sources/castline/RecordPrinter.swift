import CastCore
import CastLogging
import CastlineLogs
import Glibc

/// Prints records for `logs query`: the console's text form or JSON Lines, through one buffer
/// (a query can print millions of lines). Used by one task at a time (the reader, then the follower).
final class RecordPrinter: @unchecked Sendable {
    let json: Bool
    private var buffer: [UInt8] = []

    init(json: Bool) {
        self.json = json
        buffer.reserveCapacity(1 << 16)
    }

    func print(_ e: LogEntry) {
        if json {
            buffer.append(contentsOf: e.json.serialized().utf8)
        } else {
            var line = "\(LogTime.rfc3339(e.time, fractionDigits: 6)) \(LogLevelMapping.row(for: e.level).consoleTag) \(e.className): \(e.body)"
            for (key, value) in e.attributes {
                let text: String
                switch value {
                case .string(let s): text = s.contains(" ") || s.isEmpty ? "\"\(s)\"" : s
                default: text = value.serialized()
                }
                line += " \(key)=\(text)"
            }
            if let file = e.file { line += " (\(file):\(e.line ?? 0))" }
            buffer.append(contentsOf: TerminalText.safe(line).utf8)
        }
        buffer.append(0x0A)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if errno == EINTR { continue }; break }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
