import CastProtocol

/// The device-auth messages in the protobuf binary format, with the generated SwiftProtobuf
/// types' results (tests and the `deviceauth` fuzz target compare them):
///
/// - decoding: what ``ProtoWireReader`` refuses is malformed; unknown fields are skipped, and so
///   is a known field with another wire type; the last value of a field wins, repeated bytes
///   append, and a nested message that occurs twice is merged; an enum value outside the enum
///   leaves the field as it was; last, the required fields of each nested message present are
///   checked, as SwiftProtobuf does when not asked for a partial message.
/// - encoding: fields in number order, an optional field only when set (also when it holds the
///   default), every required field. Unknown fields are not kept.
extension DeviceAuthMessage {
    public init(decoding bytes: [UInt8]) throws(DeviceAuthDecodingError) {
        let result: Result<DeviceAuthMessage, DeviceAuthDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(DeviceAuthDecodingError) {
                return .success(try Self.decode(raw))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    private static func decode(_ raw: UnsafeRawBufferPointer) throws(DeviceAuthDecodingError) -> DeviceAuthMessage {
        var challenge: AuthChallenge?
        // Nested messages with required fields are read into a value with placeholders, and
        // `FieldsRead` remembers which fields the bytes held.
        var response: (value: AuthResponse, read: FieldsRead)?
        var error: (value: AuthError, read: FieldsRead)?
        do {
            var reader = ProtoWireReader(raw)
            while !reader.isAtEnd {
                let tag = try reader.tag()
                switch (tag.field, tag.wireType) {
                case (1, .lengthDelimited):
                    var nested = try reader.message()
                    var value = challenge ?? AuthChallenge()
                    try value.merge(&nested)
                    challenge = value
                case (2, .lengthDelimited):
                    var nested = try reader.message()
                    var partial = response ?? (AuthResponse(signature: [], clientAuthCertificate: []), FieldsRead())
                    try partial.value.merge(&nested, read: &partial.read)
                    response = partial
                case (3, .lengthDelimited):
                    var nested = try reader.message()
                    var partial = error ?? (AuthError(errorType: .internalError), FieldsRead())
                    try partial.value.merge(&nested, read: &partial.read)
                    error = partial
                default:
                    try reader.skip(tag)
                }
            }
        } catch {
            throw .malformed(error)
        }
        if let response {
            if !response.read.contains(1) { throw .missingRequiredField("AuthResponse.signature") }
            if !response.read.contains(2) { throw .missingRequiredField("AuthResponse.client_auth_certificate") }
        }
        if let error, !error.read.contains(1) { throw .missingRequiredField("AuthError.error_type") }
        return DeviceAuthMessage(challenge: challenge, response: response?.value, error: error?.value)
    }

    /// The message's bytes.
    public func serialized() -> [UInt8] {
        var out = ProtoByteWriter()
        if let challenge { out.messageField(1, challenge.write) }
        if let response { out.messageField(2, response.write) }
        if let error { out.messageField(3) { $0.varintField(1, UInt64(error.errorType.rawValue)) } }
        return out.bytes
    }
}

/// The field numbers (below 64) a nested message's bytes held.
private struct FieldsRead {
    private var mask: UInt64 = 0
    mutating func insert(_ field: UInt64) { mask |= 1 << field }
    func contains(_ field: UInt64) -> Bool { mask & (1 << field) != 0 }
}

/// proto2 closed enums: a value read as `int32` that is not a case is not the field's value.
private protocol ClosedEnum: RawRepresentable where RawValue == Int32 {}
extension ClosedEnum {
    init?(wire: UInt64) { self.init(rawValue: Int32(truncatingIfNeeded: wire)) }
    var wire: UInt64 { UInt64(rawValue) }
}
extension AuthSignatureAlgorithm: ClosedEnum {}
extension AuthHashAlgorithm: ClosedEnum {}
extension AuthError.ErrorType: ClosedEnum {}

extension AuthChallenge {
    fileprivate mutating func merge(_ reader: inout ProtoWireReader) throws(ProtoWireError) {
        while !reader.isAtEnd {
            let tag = try reader.tag()
            switch (tag.field, tag.wireType) {
            case (1, .varint):
                let value = try reader.varint()
                if let known = AuthSignatureAlgorithm(wire: value) { signatureAlgorithm = known }
                else if unknownSignatureAlgorithm == nil { unknownSignatureAlgorithm = value }
            case (2, .lengthDelimited): senderNonce = Array(try reader.lengthDelimited())
            case (3, .varint):
                let value = try reader.varint()
                if let known = AuthHashAlgorithm(wire: value) { hashAlgorithm = known }
                else if unknownHashAlgorithm == nil { unknownHashAlgorithm = value }
            default: try reader.skip(tag)
            }
        }
    }

    fileprivate func write(_ out: inout ProtoByteWriter) {
        if let signatureAlgorithm { out.varintField(1, signatureAlgorithm.wire) }
        if let senderNonce { out.bytesField(2, senderNonce) }
        if let hashAlgorithm { out.varintField(3, hashAlgorithm.wire) }
    }
}

extension AuthResponse {
    fileprivate mutating func merge(_ reader: inout ProtoWireReader, read: inout FieldsRead) throws(ProtoWireError) {
        while !reader.isAtEnd {
            let tag = try reader.tag()
            switch (tag.field, tag.wireType) {
            case (1, .lengthDelimited): signature = Array(try reader.lengthDelimited())
            case (2, .lengthDelimited): clientAuthCertificate = Array(try reader.lengthDelimited())
            case (3, .lengthDelimited): intermediateCertificates.append(Array(try reader.lengthDelimited()))
            case (4, .varint): signatureAlgorithm = AuthSignatureAlgorithm(wire: try reader.varint()) ?? signatureAlgorithm
            case (5, .lengthDelimited): senderNonce = Array(try reader.lengthDelimited())
            case (6, .varint): hashAlgorithm = AuthHashAlgorithm(wire: try reader.varint()) ?? hashAlgorithm
            case (7, .lengthDelimited): crl = Array(try reader.lengthDelimited())
            default:
                try reader.skip(tag)
                continue
            }
            read.insert(tag.field)
        }
    }

    fileprivate func write(_ out: inout ProtoByteWriter) {
        out.bytesField(1, signature)
        out.bytesField(2, clientAuthCertificate)
        for certificate in intermediateCertificates { out.bytesField(3, certificate) }
        if let signatureAlgorithm { out.varintField(4, signatureAlgorithm.wire) }
        if let senderNonce { out.bytesField(5, senderNonce) }
        if let hashAlgorithm { out.varintField(6, hashAlgorithm.wire) }
        if let crl { out.bytesField(7, crl) }
    }
}

extension AuthError {
    fileprivate mutating func merge(_ reader: inout ProtoWireReader, read: inout FieldsRead) throws(ProtoWireError) {
        while !reader.isAtEnd {
            let tag = try reader.tag()
            if tag == ProtoTag(field: 1, wireType: .varint) {
                if let known = ErrorType(wire: try reader.varint()) {
                    errorType = known
                    read.insert(1)
                }
            } else {
                try reader.skip(tag)
            }
        }
    }
}
