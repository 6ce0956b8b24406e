import CastProtocol

/// The device-auth messages of `Protos/cast_channel.proto` (proto2), the payload of the
/// `urn:x-cast:com.google.cast.tp.deviceauth` namespace. Written and read by hand
/// (`DeviceAuthMessage+Wire.swift`); the generated SwiftProtobuf types are the tests' reference.
///
/// An optional field is nil when absent; an absent enum field means the proto's default
/// (`RSASSA_PKCS1v15`, `SHA1`).
public struct DeviceAuthMessage: Sendable, Equatable {
    public var challenge: AuthChallenge?
    package var response: AuthResponse?
    package var error: AuthError?

    package init(challenge: AuthChallenge? = nil, response: AuthResponse? = nil, error: AuthError? = nil) {
        self.challenge = challenge
        self.response = response
        self.error = error
    }
}

/// `SignatureAlgorithm`.
package enum AuthSignatureAlgorithm: Int32, Sendable {
    case unspecified = 0
    case rsassaPKCS1v15 = 1
    case rsassaPSS = 2
}

/// `HashAlgorithm`.
package enum AuthHashAlgorithm: Int32, Sendable {
    case sha1 = 0
    case sha256 = 1
}

/// `AuthChallenge`: what the sender asks the device to sign with.
public struct AuthChallenge: Sendable, Equatable {
    /// Field 1, default `RSASSA_PKCS1v15`.
    package var signatureAlgorithm: AuthSignatureAlgorithm?
    /// Field 2: bytes the device signs in front of its TLS certificate and echoes back.
    package var senderNonce: [UInt8]?
    /// Field 3, default `SHA1`.
    package var hashAlgorithm: AuthHashAlgorithm?
    /// The first value outside the enum read for field 1 or 3. proto2 keeps such a value as an
    /// unknown field rather than setting the field; a device has to refuse it. Not written.
    public var unknownSignatureAlgorithm: UInt64?
    public var unknownHashAlgorithm: UInt64?

    package init(signatureAlgorithm: AuthSignatureAlgorithm? = nil, senderNonce: [UInt8]? = nil, hashAlgorithm: AuthHashAlgorithm? = nil) {
        self.signatureAlgorithm = signatureAlgorithm
        self.senderNonce = senderNonce
        self.hashAlgorithm = hashAlgorithm
    }
}

/// `AuthResponse`: the device's signature and certificate chain.
package struct AuthResponse: Sendable, Equatable {
    /// Field 1 (required).
    package var signature: [UInt8]
    /// Field 2 (required): the device certificate, DER.
    package var clientAuthCertificate: [UInt8]
    /// Field 3 (repeated): intermediate certificates, DER, in order.
    package var intermediateCertificates: [[UInt8]]
    /// Field 4, default `RSASSA_PKCS1v15`. A value outside the enum reads as absent.
    package var signatureAlgorithm: AuthSignatureAlgorithm?
    /// Field 5: the challenge's nonce, echoed.
    package var senderNonce: [UInt8]?
    /// Field 6, default `SHA1`. A value outside the enum reads as absent.
    package var hashAlgorithm: AuthHashAlgorithm?
    /// Field 7.
    package var crl: [UInt8]?

    package init(signature: [UInt8], clientAuthCertificate: [UInt8], intermediateCertificates: [[UInt8]] = [],
                signatureAlgorithm: AuthSignatureAlgorithm? = nil, senderNonce: [UInt8]? = nil,
                hashAlgorithm: AuthHashAlgorithm? = nil, crl: [UInt8]? = nil) {
        self.signature = signature
        self.clientAuthCertificate = clientAuthCertificate
        self.intermediateCertificates = intermediateCertificates
        self.signatureAlgorithm = signatureAlgorithm
        self.senderNonce = senderNonce
        self.hashAlgorithm = hashAlgorithm
        self.crl = crl
    }
}

/// `AuthError`: why the device did not answer.
package struct AuthError: Sendable, Equatable {
    /// `AuthError.ErrorType`.
    package enum ErrorType: Int32, Sendable {
        case internalError = 0
        case noTLS = 1
        case signatureAlgorithmUnavailable = 2
    }

    /// Field 1 (required). A value outside the enum leaves it unset, so such a message does not
    /// decode.
    package var errorType: ErrorType

    package init(errorType: ErrorType) { self.errorType = errorType }
}

/// Bytes that are not a `DeviceAuthMessage`.
public enum DeviceAuthDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not the protobuf binary format.
    case malformed(ProtoWireError)
    /// A `required` field of a nested message that is present is absent, e.g.
    /// `AuthResponse.signature`.
    case missingRequiredField(String)

    public var description: String {
        switch self {
        case .malformed(let error): return "malformed protobuf: \(error)"
        case .missingRequiredField(let name): return "required field \(name) is missing"
        }
    }
}
