import CastCore
#if canImport(Glibc)
import Glibc
#endif

/// Reads a serialized `CastMessage` straight from bytes: the hot decode path.
///
/// Same result as decoding with the generated SwiftProtobuf type (tests and the `frame` fuzz
/// target compare the two on every input), but strings are checked with the standard library's
/// fast UTF-8 validation instead of SwiftProtobuf's scalar-by-scalar pass, which dominated the
/// decode cost. Unknown fields are skipped, and so is a known field with an unexpected wire type
/// (SwiftProtobuf and C++ keep it as an unknown field); unknown groups are skipped up to their
/// end tag, nested at most ``groupDepthLimit`` deep. A truncated field, an unmatched end-group, a
/// varint longer than 10 bytes, or a tag of 32 bits or more (as SwiftProtobuf: `UInt32.max` and
/// above) or with field number 0 is malformed.
enum CastMessageWireReader {
    /// How deeply unknown groups may nest: SwiftProtobuf's default message depth limit (100),
    /// of which the CastMessage itself takes one (the test at 99/100/101 pins this).
    static let groupDepthLimit = 99

    struct Fields {
        /// proto2 closed-enum rule (as SwiftProtobuf and C++ apply it): a value inside the enum
        /// sets the field, one outside goes to unknown fields; the last known value wins, else the
        /// last unknown one is reported.
        var protocolVersionKnown: UInt64?
        var protocolVersionUnknown: UInt64?
        var protocolVersion: UInt64? { protocolVersionKnown ?? protocolVersionUnknown }
        var sourceID: String?
        var destinationID: String?
        var namespace: String?
        var payloadTypeKnown: UInt64?
        var payloadTypeUnknown: UInt64?
        var payloadType: UInt64? { payloadTypeKnown ?? payloadTypeUnknown }
        var payloadUTF8: String?
        var payloadBinary: [UInt8]?
        var continued: Bool?
        var remainingLength: UInt32?
    }

    /// Reads one message. `sourceID` / `destinationID` strings equal to `reusableSource` /
    /// `reusableDestination` are those strings (no validation, allocation or copy).
    static func read(
        _ bytes: UnsafeRawBufferPointer, reusableSource: String? = nil, reusableDestination: String? = nil
    ) throws(CastMessageDecodingError) -> Fields {
        // Locals, then one memberwise `Fields(…)` at the end: mutating a `Fields` value and returning
        // it made the optimizer build it twice and copy one (a retain and a release per string).
        var protocolVersionKnown: UInt64?
        var protocolVersionUnknown: UInt64?
        var sourceID: String?
        var destinationID: String?
        var namespace: String?
        var payloadTypeKnown: UInt64?
        var payloadTypeUnknown: UInt64?
        var payloadUTF8: String?
        var payloadBinary: [UInt8]?
        var continued: Bool?
        var remainingLength: UInt32?
        var i = 0
        let n = bytes.count
        func malformed(_ reason: String) -> CastMessageDecodingError { .malformedProtobuf(byteCount: n, reason: reason) }

        func varint() throws(CastMessageDecodingError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard i < n else { throw malformed("truncated varint") }
                let b = bytes[i]
                i += 1
                if shift == 63, b > 1 { throw malformed("varint overflows 64 bits") }
                value |= UInt64(b & 0x7F) << shift
                if b & 0x80 == 0 { return value }
                shift += 7
                if shift > 63 { throw malformed("varint longer than 10 bytes") }
            }
        }
        func lengthDelimited() throws(CastMessageDecodingError) -> UnsafeRawBufferPointer {
            let length = try varint()
            guard length <= UInt64(n - i) else { throw malformed("length-delimited field runs past the end") }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[i..<(i + Int(length))])
            i += Int(length)
            return slice
        }
        func string(_ field: Int, reusing reusable: String? = nil) throws(CastMessageDecodingError) -> String {
            let raw = try lengthDelimited()
            if let reusable, reusable.utf8.count == raw.count,
               reusable.utf8.withContiguousStorageIfAvailable({ $0.count == 0 || memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }) == true {
                return reusable
            }
            guard let s = utf8String(raw) else { throw malformed("field \(field) is not valid UTF-8") }
            return s
        }

        /// Skips one unknown field; a group through its matching end tag (nested groups too).
        func skipUnknown(field: UInt64, wireType: UInt64) throws(CastMessageDecodingError) {
            var open: [UInt64] = []   // field numbers of the groups being skipped
            var field = field, wireType = wireType
            while true {
                switch wireType {
                case 0: _ = try varint()
                case 1:
                    guard n - i >= 8 else { throw malformed("truncated fixed64 field") }
                    i += 8
                case 2: _ = try lengthDelimited()
                case 3:
                    guard open.count < groupDepthLimit else { throw malformed("groups nested deeper than \(groupDepthLimit)") }
                    open.append(field)
                case 4:
                    guard open.last == field else { throw malformed("end of group \(field) without its start") }
                    open.removeLast()
                case 5:
                    guard n - i >= 4 else { throw malformed("truncated fixed32 field") }
                    i += 4
                default: throw malformed("unsupported wire type \(wireType) in field \(field)")
                }
                if open.isEmpty { return }
                guard i < n else { throw malformed("group \(open.last!) is not closed") }
                let key = try tag()
                field = key >> 3
                wireType = key & 7
            }
        }
        /// A field's tag. SwiftProtobuf's rule: below `UInt32.max` (so field numbers up to
        /// 2^29 - 1), field number not 0.
        func tag() throws(CastMessageDecodingError) -> UInt64 {
            let key = try varint()
            guard key < UInt64(UInt32.max) else { throw malformed("tag \(key) does not fit 32 bits") }
            guard key >> 3 > 0 else { throw malformed("invalid field number 0") }
            return key
        }

        while i < n {
            let key = try tag()
            let field = key >> 3
            let wireType = key & 7
            // A known field only with its own wire type; otherwise it is read as an unknown field.
            let known: UInt64
            switch field {
            case 1, 5, 8, 9: known = wireType == 0 ? field : 0
            case 2, 3, 4, 6, 7: known = wireType == 2 ? field : 0
            default: known = 0
            }
            switch known {
            case 1:
                let v = try varint()
                if (0...3).contains(Int32(truncatingIfNeeded: v)) { protocolVersionKnown = v } else { protocolVersionUnknown = v }
            case 2: sourceID = try string(2, reusing: reusableSource)
            case 3: destinationID = try string(3, reusing: reusableDestination)
            case 4: namespace = try string(4)
            case 5:
                let v = try varint()
                if (0...1).contains(Int32(truncatingIfNeeded: v)) { payloadTypeKnown = v } else { payloadTypeUnknown = v }
            case 6: payloadUTF8 = try string(6)
            case 7: payloadBinary = Array(try lengthDelimited())
            case 8: continued = try varint() != 0
            case 9: remainingLength = UInt32(truncatingIfNeeded: try varint())
            default:
                try skipUnknown(field: field, wireType: wireType)
            }
        }
        return Fields(
            protocolVersionKnown: protocolVersionKnown, protocolVersionUnknown: protocolVersionUnknown,
            sourceID: consume sourceID, destinationID: consume destinationID, namespace: consume namespace,
            payloadTypeKnown: payloadTypeKnown, payloadTypeUnknown: payloadTypeUnknown,
            payloadUTF8: consume payloadUTF8, payloadBinary: consume payloadBinary,
            continued: continued, remainingLength: remainingLength)
    }

    /// A String from UTF-8 bytes, nil if they are not valid UTF-8. Strings Cast repeats in every
    /// message (namespaces, `receiver-0`, `*`) come interned, without allocating. Otherwise
    /// `String(decoding:)` validates once and replaces invalid sequences with U+FFFD; its result is
    /// always valid UTF-8, so it holds exactly the input's bytes only when the input was valid: one
    /// `memcmp` instead of a second validation pass.
    static func utf8String(_ raw: UnsafeRawBufferPointer) -> String? {
        if let interned = String.castInterned(raw) { return interned }
        var string = String(decoding: raw.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        let exact = string.withUTF8 { decoded in
            decoded.count == raw.count && (raw.isEmpty || memcmp(decoded.baseAddress!, raw.baseAddress!, raw.count) == 0)
        }
        return exact ? string : nil
    }
}
