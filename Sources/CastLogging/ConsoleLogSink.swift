#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built-in sink: one line per record (see ``LogRecordFormatter``; short lines for people by
/// default) to standard error or standard output.
///
/// Colour is on when the stream is a terminal and `NO_COLOR` is unset. Each batch is written with
/// as few `write(2)` calls as possible; short writes and `EINTR` are retried.
public final class ConsoleLogSink: LogSink {
    public enum Stream: Sendable { case standardError, standardOutput }

    public let name: String
    private let fd: Int32
    private let formatter: LogRecordFormatter

    public init(name: String = "console", stream: Stream = .standardError, color: Bool? = nil, style: LogRecordFormatter.Style = .short) {
        self.name = name
        self.fd = stream == .standardError ? 2 : 1
        let useColor = color ?? (isatty(stream == .standardError ? 2 : 1) == 1 && getenv("NO_COLOR") == nil)
        self.formatter = LogRecordFormatter(color: useColor, style: style)
    }

    public func write(_ records: [LogRecord]) {
        var text = ""
        for r in records {
            text += formatter.format(r)
            text += "\n"
            if text.utf8.count > 64 * 1024 {
                writeAll(text)
                text = ""
            }
        }
        if !text.isEmpty { writeAll(text) }
    }

    private func writeAll(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return  // stderr closed: nothing sensible left to report to
                }
                offset += n
            }
        }
    }
}
