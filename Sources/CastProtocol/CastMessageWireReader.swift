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
/// (SwiftProtobuf and C++ keep it as an unknown field); what is malformed is
/// ``ProtoWireReader``'s business.
enum CastMessageWireReader {
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
        do {
            return try fields(bytes, reusableSource: reusableSource, reusableDestination: reusableDestination)
        } catch {
            throw .malformedProtobuf(byteCount: bytes.count, reason: error.description)
        }
    }

    private static func fields(
        _ bytes: UnsafeRawBufferPointer, reusableSource: String?, reusableDestination: String?
    ) throws(ProtoWireError) -> Fields {
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
        var reader = ProtoWireReader(bytes)
        while !reader.isAtEnd {
            let tag = try reader.tag()
            // A known field only with its own wire type; otherwise it is read as an unknown field.
            switch (tag.field, tag.wireType) {
            case (1, .varint):
                let v = try reader.varint()
                if (0...3).contains(Int32(truncatingIfNeeded: v)) { protocolVersionKnown = v } else { protocolVersionUnknown = v }
            case (2, .lengthDelimited): sourceID = try string(&reader, field: 2, reusing: reusableSource)
            case (3, .lengthDelimited): destinationID = try string(&reader, field: 3, reusing: reusableDestination)
            case (4, .lengthDelimited): namespace = try string(&reader, field: 4)
            case (5, .varint):
                let v = try reader.varint()
                if (0...1).contains(Int32(truncatingIfNeeded: v)) { payloadTypeKnown = v } else { payloadTypeUnknown = v }
            case (6, .lengthDelimited): payloadUTF8 = try string(&reader, field: 6)
            case (7, .lengthDelimited): payloadBinary = Array(try reader.lengthDelimited())
            case (8, .varint): continued = try reader.varint() != 0
            case (9, .varint): remainingLength = UInt32(truncatingIfNeeded: try reader.varint())
            default: try reader.skip(tag)
            }
        }
        return Fields(
            protocolVersionKnown: protocolVersionKnown, protocolVersionUnknown: protocolVersionUnknown,
            sourceID: consume sourceID, destinationID: consume destinationID, namespace: consume namespace,
            payloadTypeKnown: payloadTypeKnown, payloadTypeUnknown: payloadTypeUnknown,
            payloadUTF8: consume payloadUTF8, payloadBinary: consume payloadBinary,
            continued: continued, remainingLength: remainingLength)
    }

    /// A string field; bytes equal to `reusable` are that string.
    private static func string(
        _ reader: inout ProtoWireReader, field: UInt64, reusing reusable: String? = nil
    ) throws(ProtoWireError) -> String {
        let raw = try reader.lengthDelimited()
        if let reusable, reusable.utf8.count == raw.count,
           reusable.utf8.withContiguousStorageIfAvailable({ $0.count == 0 || memcmp($0.baseAddress!, raw.baseAddress!, raw.count) == 0 }) == true {
            return reusable
        }
        guard let s = utf8String(raw) else { throw .invalidUTF8(field: field) }
        return s
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
