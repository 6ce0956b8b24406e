internal import CCastShims
import CastCore
import CastLogging
import Glibc

/// A cheap first look at a raw castline JSON line (version 1: keys in the sink's fixed order, no
/// spaces) that rejects lines the filter cannot match without parsing them. It only ever says
/// "no" when the full ``LogFilter`` would say no too (tested), and "maybe" for anything it does
/// not recognise (journal entries, escaped strings, other writers). Pure.
public struct LinePrefilter: Sendable {
    let minimumSeverity: Int64?
    let classPatterns: [GlobPattern]
    let since: Int64?
    let until: Int64?
    /// Byte strings that must appear somewhere in the line.
    let needles: [[UInt8]]
    /// Groups of byte strings of which at least one must appear (a value under any of its keys).
    let anyOf: [[[UInt8]]]

    public init(_ filter: LogFilter) {
        if let level = filter.minimumLevel, level != .none {
            minimumSeverity = Int64(LogLevelMapping.row(for: level).otelSeverityNumber)
        } else {
            minimumSeverity = nil
        }
        classPatterns = filter.classPatterns
        since = filter.since
        until = filter.until
        var needles: [[UInt8]] = []
        // Exact string values appear JSON-escaped with their quotes; escaping is the writer's
        // (quotes, backslashes, control characters), so only plain values become needles.
        func plain(_ s: String) -> Bool { !s.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        if let type = filter.messageType, plain(type) { needles.append(Array("\"type\":\"\(type)\"".utf8)) }
        if let id = filter.requestID { needles.append(Array("\"requestId\":\(id)".utf8)) }
        if let ns = filter.namespace, plain(ns) { needles.append(Array(ns.utf8)) }
        var anyOf: [[[UInt8]]] = []
        if let session = filter.session, plain(session) {
            // LogFilter.matches: the value under session, sessionId or localSession (a number here).
            var group = [Array("\"session\":\"\(session)\"".utf8), Array("\"sessionId\":\"\(session)\"".utf8),
                         Array("\"localSession\":\"\(session)\"".utf8)]
            if Int64(session) != nil { group.append(Array("\"localSession\":\(session)".utf8)) }
            anyOf.append(group)
        }
        if let device = filter.device, plain(device) {
            // A glob's longest literal run must appear in the value (`dev-004*` → `dev-004`).
            let literal = Self.longestLiteral(inGlob: device)
            if literal.count >= 2 { needles.append(Array(literal.utf8)) }
        }
        if let text = filter.text, plain(text) { needles.append(Array(text.utf8)) }
        self.needles = needles
        self.anyOf = anyOf
    }

    /// The longest run of plain characters in a glob (`*`, `?` and `[...]` split runs; a
    /// backslash escapes the next character); the whole text when it has no glob syntax.
    package static func longestLiteral(inGlob glob: String) -> String {
        var best = "", current = ""
        var inClass = false, escaped = false
        for c in glob {
            if escaped { current.append(c); escaped = false; continue }
            if inClass { if c == "]" { inClass = false }; continue }
            switch c {
            case "\\": escaped = true
            case "*", "?": if current.count > best.count { best = current }; current = ""
            case "[": if current.count > best.count { best = current }; current = ""; inClass = true
            default: current.append(c)
            }
        }
        return current.count > best.count ? current : best
    }

    static let head = Array("{\"time\":\"".utf8)
    static let timeKey = Array("\"time_unix_nano\":".utf8)
    static let severityKey = Array("\"severity_number\":".utf8)
    static let classKey = Array("\"class\":\"".utf8)

    /// False: the line cannot match. True: parse it and ask the filter.
    public func mayMatch(_ line: UnsafeRawBufferPointer) -> Bool {
        guard let base = line.baseAddress, line.count > Self.head.count,
              memcmp(base, Self.head, Self.head.count) == 0 else { return true }
        if since != nil || until != nil, let t = Self.integer(after: Self.timeKey, in: line) {
            if let since, t < since { return false }
            if let until, t >= until { return false }
        }
        if let minimumSeverity, let s = Self.integer(after: Self.severityKey, in: line), s < minimumSeverity { return false }
        if !classPatterns.isEmpty, let start = Self.find(Self.classKey, in: line, from: 0).map({ $0 + Self.classKey.count }) {
            guard let quote = memchr(base + start, 0x22, line.count - start) else { return true }
            let end = base.distance(to: UnsafeRawPointer(quote))
            let name = UnsafeRawBufferPointer(start: base + start, count: end - start)
            if memchr(base + start, 0x5C, end - start) == nil {
                let bytes = name.bindMemory(to: UInt8.self)
                if !classPatterns.contains(where: { $0.matches(utf8: bytes) }) { return false }
            }
        }
        for needle in needles where Self.find(needle, in: line, from: 0) == nil { return false }
        for group in anyOf where !group.contains(where: { Self.find($0, in: line, from: 0) != nil }) { return false }
        return true
    }

    /// The offset of `needle` in `line` at or after `from` (glibc's two-way `memmem`).
    static func find(_ needle: [UInt8], in line: UnsafeRawBufferPointer, from: Int) -> Int? {
        guard let base = line.baseAddress, !needle.isEmpty, needle.count <= line.count - from else { return nil }
        let hit = needle.withUnsafeBytes { castline_memmem(base + from, line.count - from, $0.baseAddress, needle.count) }
        return hit.map { base.distance(to: $0) }
    }

    /// The integer right after `key` (`"time_unix_nano":1795…`), or nil.
    static func integer(after key: [UInt8], in line: UnsafeRawBufferPointer) -> Int64? {
        guard var i = find(key, in: line, from: 0).map({ $0 + key.count }) else { return nil }
        var negative = false
        if i < line.count, line[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        var value: Int64 = 0
        var digits = 0
        while i < line.count, line[i] >= 48, line[i] <= 57, digits < 19 {
            value = value * 10 + Int64(line[i] - 48)
            digits += 1
            i += 1
        }
        guard digits > 0, i < line.count, line[i] < 48 || line[i] > 57 else { return nil }
        return negative ? -value : value
    }
}
