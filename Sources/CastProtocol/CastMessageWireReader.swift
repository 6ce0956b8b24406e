/// Reads a serialized `CastMessage` straight from bytes: the hot decode path.
///
/// Same result as decoding with the generated SwiftProtobuf type (tests and the `frame` fuzz
/// target compare the two on every input), but strings are checked with the standard library's
/// fast UTF-8 validation instead of SwiftProtobuf's scalar-by-scalar pass, which dominated the
/// decode cost. Unknown fields are skipped; a known field with the wrong wire type, a truncated
/// field, a group or a varint longer than 10 bytes is malformed.
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

    static func read(_ bytes: UnsafeRawBufferPointer) throws(CastMessageDecodingError) -> Fields {
        var fields = Fields()
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
        func string(_ field: Int) throws(CastMessageDecodingError) -> String {
            let raw = try lengthDelimited()
            guard let s = utf8String(raw) else { throw malformed("field \(field) is not valid UTF-8") }
            return s
        }

        while i < n {
            let key = try varint()
            let field = key >> 3
            let wireType = key & 7
            guard field > 0, field <= UInt64(Int32.max) else { throw malformed("invalid field number \(field)") }
            func expect(_ type: UInt64) throws(CastMessageDecodingError) {
                guard wireType == type else { throw malformed("field \(field) has wire type \(wireType), expected \(type)") }
            }
            switch field {
            case 1:
                try expect(0)
                let v = try varint()
                if (0...3).contains(Int32(truncatingIfNeeded: v)) { fields.protocolVersionKnown = v } else { fields.protocolVersionUnknown = v }
            case 2: try expect(2); fields.sourceID = try string(2)
            case 3: try expect(2); fields.destinationID = try string(3)
            case 4: try expect(2); fields.namespace = try string(4)
            case 5:
                try expect(0)
                let v = try varint()
                if (0...1).contains(Int32(truncatingIfNeeded: v)) { fields.payloadTypeKnown = v } else { fields.payloadTypeUnknown = v }
            case 6: try expect(2); fields.payloadUTF8 = try string(6)
            case 7: try expect(2); fields.payloadBinary = Array(try lengthDelimited())
            case 8: try expect(0); fields.continued = try varint() != 0
            case 9: try expect(0); fields.remainingLength = UInt32(truncatingIfNeeded: try varint())
            default:
                switch wireType {
                case 0: _ = try varint()
                case 1:
                    guard n - i >= 8 else { throw malformed("truncated fixed64 field") }
                    i += 8
                case 2: _ = try lengthDelimited()
                case 5:
                    guard n - i >= 4 else { throw malformed("truncated fixed32 field") }
                    i += 4
                default: throw malformed("unsupported wire type \(wireType) in field \(field)")
                }
            }
        }
        return fields
    }

    /// A String from UTF-8 bytes, nil if they are not valid UTF-8. ASCII (what ids, namespaces and
    /// JSON mostly are) is checked eight bytes at a time and copied without a second validation.
    static func utf8String(_ raw: UnsafeRawBufferPointer) -> String? {
        let count = raw.count
        var i = 0
        var ascii = true
        while i + 8 <= count {
            if raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                ascii = false
                break
            }
            i += 8
        }
        if ascii {
            while i < count {
                if raw[i] & 0x80 != 0 {
                    ascii = false
                    break
                }
                i += 1
            }
        }
        let bytes = raw.assumingMemoryBound(to: UInt8.self)
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self)
    }
}
