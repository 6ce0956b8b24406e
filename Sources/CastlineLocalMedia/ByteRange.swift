/// What a server should send for a request's `Range` header, given the file's size
/// (RFC 9110 §14: range units, `Range`, `Content-Range`).
///
/// Pure value type. ``parse(_:size:)`` accepts `bytes=a-b`, `bytes=a-` and `bytes=-n` (suffix),
/// the unit case-insensitively, with optional whitespace around `=`, `-` and `,`.
///
/// | Result            | Response                                                  |
/// |-------------------|-----------------------------------------------------------|
/// | ``full``          | 200 with the whole file                                   |
/// | ``partial(_:)``   | 206 with `Content-Range: bytes a-b/size`                  |
/// | ``unsatisfiable`` | 416 with `Content-Range: bytes */size`                    |
/// | ``malformed``     | 200 with the whole file (an invalid `Range` is ignored)   |
///
/// A request for several ranges (`bytes=0-1,5-6`) is answered with the whole file (a server may
/// ignore `Range`, §14.2) unless none of its ranges is satisfiable, which is a 416.
package enum ByteRange: Sendable, Hashable {
    /// No `Range` header, or a range unit other than `bytes`: send the whole file.
    case full
    /// One satisfiable range, inclusive, already clamped to the file (`upperBound <= size - 1`).
    case partial(ClosedRange<Int64>)
    /// No requested range overlaps the file (also any range of an empty file, and `bytes=-0`).
    case unsatisfiable
    /// A `bytes` header that does not follow the grammar: ignore it and send the whole file.
    case malformed

    /// Decides what to send for `header` (the `Range` field value, nil when absent) against a
    /// file of `size` bytes (negative sizes count as 0).
    package static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header else { return .full }
        let size = max(size, 0)
        let bytes = Array(header.utf8)
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")) else {
            // `bytes` alone is a broken bytes header; anything else is a unit we do not know.
            return isBytesUnit(bytes[...]) ? .malformed : .full
        }
        guard isBytesUnit(bytes[..<equals]) else { return .full }
        var specs: [Spec] = []
        for element in bytes[(equals + 1)...].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let trimmed = trim(element)
            if trimmed.isEmpty { continue }   // RFC 9110 §5.6.1: empty list elements are allowed
            guard let spec = Spec(trimmed) else { return .malformed }
            specs.append(spec)
        }
        let satisfiable = specs.compactMap { $0.resolved(size: size) }
        switch (specs.count, satisfiable.count) {
        case (0, _): return .malformed
        case (_, 0): return .unsatisfiable
        case (1, _): return .partial(satisfiable[0])
        default: return .full
        }
    }

    /// The `Content-Range` value for this result: `bytes a-b/size` for ``partial(_:)``,
    /// `bytes */size` for ``unsatisfiable``, nil otherwise.
    package func contentRange(size: Int64) -> String? {
        switch self {
        case .partial(let range): return "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        case .unsatisfiable: return "bytes */\(size)"
        case .full, .malformed: return nil
        }
    }

    /// Number of body bytes a response sends for this result against a file of `size` bytes.
    package func bodyLength(size: Int64) -> Int64 {
        switch self {
        case .partial(let range): return range.upperBound - range.lowerBound + 1
        case .unsatisfiable: return 0
        case .full, .malformed: return max(size, 0)
        }
    }

    // MARK: Grammar

    /// One range-spec: `first-last`, `first-` or `-suffix`. Numbers saturate at `Int64.max`, so
    /// a huge first position is merely unsatisfiable and a huge last position is clamped.
    private enum Spec {
        case from(first: Int64, last: Int64?)
        case suffix(Int64)

        init?(_ text: ArraySlice<UInt8>) {
            guard let dash = text.firstIndex(of: UInt8(ascii: "-")) else { return nil }
            let firstText = ByteRange.trim(text[..<dash])
            let lastText = ByteRange.trim(text[(dash + 1)...])
            if firstText.isEmpty {
                guard let suffix = ByteRange.number(lastText) else { return nil }
                self = .suffix(suffix)
                return
            }
            guard let first = ByteRange.number(firstText) else { return nil }
            if lastText.isEmpty {
                self = .from(first: first, last: nil)
                return
            }
            // An int-range whose last position is below its first is invalid (§14.1.1).
            guard let last = ByteRange.number(lastText), last >= first else { return nil }
            self = .from(first: first, last: last)
        }

        /// The bytes this spec selects from a file of `size` bytes; nil when unsatisfiable.
        func resolved(size: Int64) -> ClosedRange<Int64>? {
            guard size > 0 else { return nil }
            switch self {
            case .from(let first, let last):
                guard first < size else { return nil }
                return first...min(last ?? (size - 1), size - 1)
            case .suffix(let length):
                guard length > 0 else { return nil }
                return (size - min(length, size))...(size - 1)
            }
        }
    }

    /// True when `text` (whitespace-trimmed) is the `bytes` unit, any case.
    private static func isBytesUnit(_ text: ArraySlice<UInt8>) -> Bool {
        let unit = trim(text)
        guard unit.count == 5 else { return false }
        return zip(unit, "bytes".utf8).allSatisfy { ($0 | 0x20) == $1 }
    }

    /// 1*DIGIT, saturating at `Int64.max`; nil for anything else (signs, spaces inside, empty).
    private static func number(_ text: ArraySlice<UInt8>) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? .max : sum
        }
        return value
    }

    /// `text` without leading and trailing spaces and tabs (OWS).
    private static func trim(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let start = text.firstIndex(where: { !isSpace($0) }),
              let end = text.lastIndex(where: { !isSpace($0) }) else { return text[text.endIndex...] }
        return text[start...end]
    }
}
