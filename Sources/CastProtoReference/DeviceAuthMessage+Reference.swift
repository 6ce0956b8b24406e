import CastDeviceAuth
import Foundation
import SwiftProtobuf

/// ``DeviceAuthMessage`` through the generated SwiftProtobuf types: the reference that
/// ``DeviceAuthMessage/init(decoding:)`` and ``DeviceAuthMessage/serialized()`` (the hand-written
/// codec) are tested and fuzzed against.
extension DeviceAuthMessage {
    /// Decodes with the generated type, required fields checked (`partial: false`). Throws
    /// SwiftProtobuf's errors.
    public init(decodingWithSwiftProtobuf bytes: [UInt8]) throws {
        self.init(reference: try Cast_Channel_DeviceAuthMessage(serializedBytes: bytes))
    }

    /// The same message from a generated one. An enum value outside the enum, which the
    /// generated type keeps in its unknown fields, becomes the challenge's `unknown…` value.
    package init(reference m: Cast_Channel_DeviceAuthMessage) {
        self.init()
        if m.hasChallenge {
            let c = m.challenge
            var challenge = AuthChallenge(
                signatureAlgorithm: c.hasSignatureAlgorithm ? AuthSignatureAlgorithm(c.signatureAlgorithm) : nil,
                senderNonce: c.hasSenderNonce ? [UInt8](c.senderNonce) : nil,
                hashAlgorithm: c.hasHashAlgorithm ? AuthHashAlgorithm(c.hashAlgorithm) : nil)
            challenge.unknownSignatureAlgorithm = UnknownFields.varints(field: 1, in: c.unknownFields.data).first
            challenge.unknownHashAlgorithm = UnknownFields.varints(field: 3, in: c.unknownFields.data).first
            self.challenge = challenge
        }
        if m.hasResponse {
            let r = m.response
            response = AuthResponse(
                signature: [UInt8](r.signature), clientAuthCertificate: [UInt8](r.clientAuthCertificate),
                intermediateCertificates: r.intermediateCertificate.map { [UInt8]($0) },
                signatureAlgorithm: r.hasSignatureAlgorithm ? AuthSignatureAlgorithm(r.signatureAlgorithm) : nil,
                senderNonce: r.hasSenderNonce ? [UInt8](r.senderNonce) : nil,
                hashAlgorithm: r.hasHashAlgorithm ? AuthHashAlgorithm(r.hashAlgorithm) : nil,
                crl: r.hasCrl ? [UInt8](r.crl) : nil)
        }
        if m.hasError {
            // A decoded message always has it (it is required); a message built in code may not.
            error = AuthError(errorType: AuthError.ErrorType(rawValue: Int32(m.error.errorType.rawValue))!)
        }
    }

    /// The generated message with the same fields (the challenge's `unknown…` values are not
    /// carried).
    package var reference: Cast_Channel_DeviceAuthMessage {
        var m = Cast_Channel_DeviceAuthMessage()
        if let challenge {
            var c = Cast_Channel_AuthChallenge()
            if let value = challenge.signatureAlgorithm { c.signatureAlgorithm = .init(value) }
            if let value = challenge.senderNonce { c.senderNonce = Data(value) }
            if let value = challenge.hashAlgorithm { c.hashAlgorithm = .init(value) }
            m.challenge = c
        }
        if let response {
            var r = Cast_Channel_AuthResponse()
            r.signature = Data(response.signature)
            r.clientAuthCertificate = Data(response.clientAuthCertificate)
            r.intermediateCertificate = response.intermediateCertificates.map { Data($0) }
            if let value = response.signatureAlgorithm { r.signatureAlgorithm = .init(value) }
            if let value = response.senderNonce { r.senderNonce = Data(value) }
            if let value = response.hashAlgorithm { r.hashAlgorithm = .init(value) }
            if let value = response.crl { r.crl = Data(value) }
            m.response = r
        }
        if let error { m.error.errorType = Cast_Channel_AuthError.ErrorType(rawValue: Int(error.errorType.rawValue))! }
        return m
    }

    /// The bytes the generated type writes for this message.
    public func serializedWithSwiftProtobuf() throws -> [UInt8] { try reference.serializedBytes() }
}

extension AuthSignatureAlgorithm {
    init(_ value: Cast_Channel_SignatureAlgorithm) { self.init(rawValue: Int32(value.rawValue))! }
}

extension AuthHashAlgorithm {
    init(_ value: Cast_Channel_HashAlgorithm) { self.init(rawValue: Int32(value.rawValue))! }
}

extension Cast_Channel_SignatureAlgorithm {
    init(_ value: AuthSignatureAlgorithm) { self.init(rawValue: Int(value.rawValue))! }
}

extension Cast_Channel_HashAlgorithm {
    init(_ value: AuthHashAlgorithm) { self.init(rawValue: Int(value.rawValue))! }
}
