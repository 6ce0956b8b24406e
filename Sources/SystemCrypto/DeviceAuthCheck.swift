/// Why a Cast device-auth reply was not accepted (the checks of openscreen's
/// `AuthenticateChallengeReply`, `cast/sender/channel/cast_auth_util.cc`).
public enum DeviceAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reply could not be decoded, or lacked a required field.
    case malformedReply(String)
    /// The device answered with an `AuthError` (its `error_type` number).
    case deviceReportedError(errorType: Int)
    /// The peer's TLS certificate starts after the verification time.
    case tlsCertificateNotYetValid(notBefore: Int64, at: Int64)
    /// The peer's TLS certificate ended before the verification time.
    case tlsCertificateExpired(notAfter: Int64, at: Int64)
    /// The peer's TLS certificate is valid for more than 4 days after the verification time.
    case tlsCertificateLifetimeTooLong(notAfter: Int64, at: Int64)
    /// The echoed sender nonce differs from the one sent (only when nonce checking is asked for).
    case senderNonceMismatch
    /// The signature field is empty.
    case emptySignature
    /// The device certificate is unusable: not DER, no common name, not RSA, no digitalSignature.
    case invalidDeviceCertificate(String)
    /// The device certificate does not chain to a trust anchor.
    case untrustedChain(ChainVerificationError)
    /// The signature over `sender_nonce || peer TLS certificate DER` does not verify.
    case signatureMismatch(DigestAlgorithm)

    public var description: String {
        switch self {
        case .malformedReply(let message): return "malformed device-auth reply: \(message)"
        case .deviceReportedError(let type): return "device answered with AuthError error_type=\(type)"
        case .tlsCertificateNotYetValid(let start, let time):
            return "peer TLS certificate not valid before \(start) (checked at \(time))"
        case .tlsCertificateExpired(let end, let time): return "peer TLS certificate expired at \(end) (checked at \(time))"
        case .tlsCertificateLifetimeTooLong(let end, let time):
            return "peer TLS certificate valid until \(end), more than 4 days after \(time)"
        case .senderNonceMismatch: return "echoed sender nonce differs from the one sent"
        case .emptySignature: return "empty signature"
        case .invalidDeviceCertificate(let message): return "device certificate: \(message)"
        case .untrustedChain(let error): return "device certificate chain: \(error)"
        case .signatureMismatch(let digest): return "\(digest) signature over nonce || peer certificate does not verify"
        }
    }
}

/// The cryptographic half of Cast device authentication, free of protobuf: what a sender
/// checks once it has decoded an `AuthResponse`.
package enum DeviceAuthCheck {
    /// Longest time a peer TLS certificate may still be valid for (openscreen
    /// `kMaxSelfSignedCertLifetimeInDays` = 4).
    package static let maxTLSCertificateLifetime: Int64 = 4 * UnixTime.day

    /// openscreen `VerifyTLSCertificateValidity`: the certificate is valid at `time` and its
    /// `notAfter` is at most 4 days after `time`.
    package static func checkPeerCertificate(_ certificate: Certificate, at time: Int64) throws(DeviceAuthError) {
        let start = certificate.notBefore, end = certificate.notAfter
        if time < start { throw .tlsCertificateNotYetValid(notBefore: start, at: time) }
        if end < time { throw .tlsCertificateExpired(notAfter: end, at: time) }
        if time + maxTLSCertificateLifetime < end { throw .tlsCertificateLifetimeTooLong(notAfter: end, at: time) }
    }

    /// Verifies the device certificate chain and the signature over `signedData`.
    ///
    /// The device certificate must chain through `intermediatesDER` to one of `trustAnchors`
    /// at `time`, carry a common name, an RSA key and the digitalSignature key usage, and its
    /// key must verify `signature` (RSASSA-PKCS1-v1_5 with `hash`) over `signedData`.
    /// - Returns: the verified device certificate.
    @discardableResult
    package static func verifyDeviceAuth(signature: [UInt8], deviceCertificateDER: [UInt8], intermediatesDER: [[UInt8]],
                                        signedData: [UInt8], hash: DigestAlgorithm, trustAnchors: [Certificate],
                                        at time: Int64) throws(DeviceAuthError) -> Certificate {
        if signature.isEmpty { throw .emptySignature }
        let device: Certificate
        var intermediates: [Certificate] = []
        do {
            device = try Certificate(derBytes: deviceCertificateDER)
            for der in intermediatesDER { intermediates.append(try Certificate(derBytes: der)) }
        } catch {
            throw .invalidDeviceCertificate("\(error)")
        }
        do {
            try CertificateChainVerifier(trustAnchors: trustAnchors).verify(device, intermediates: intermediates, at: time)
        } catch {
            throw .untrustedChain(error)
        }
        guard let name = device.commonName, !name.isEmpty else { throw .invalidDeviceCertificate("no common name") }
        guard case .rsa = device.publicKeyKind else {
            throw .invalidDeviceCertificate("key is \(device.publicKeyKind?.description ?? "unreadable"), not RSA")
        }
        guard let usage = device.keyUsage, usage.contains(.digitalSignature) else {
            throw .invalidDeviceCertificate("no digitalSignature key usage")
        }
        guard Signature.verify(signature, data: signedData, certificate: device, digest: hash) else {
            throw .signatureMismatch(hash)
        }
        return device
    }

    /// The whole sender-side check for one reply, in openscreen's order: the peer TLS
    /// certificate's validity window, the nonce echo (when `expectedNonce` is given), the
    /// chain, then the signature over `senderNonce || peerCertificateDER`.
    /// - Returns: the verified device certificate.
    @discardableResult
    package static func verifyReply(signature: [UInt8], deviceCertificateDER: [UInt8], intermediatesDER: [[UInt8]],
                                   senderNonce: [UInt8], expectedNonce: [UInt8]? = nil, peerCertificateDER: [UInt8],
                                   hash: DigestAlgorithm, trustAnchors: [Certificate],
                                   at time: Int64 = UnixTime.now) throws(DeviceAuthError) -> Certificate {
        let peer: Certificate
        do { peer = try Certificate(derBytes: peerCertificateDER) } catch {
            throw .malformedReply("peer TLS certificate: \(error)")
        }
        try checkPeerCertificate(peer, at: time)
        if let expectedNonce, expectedNonce != senderNonce { throw .senderNonceMismatch }
        return try verifyDeviceAuth(signature: signature, deviceCertificateDER: deviceCertificateDER,
                                    intermediatesDER: intermediatesDER, signedData: senderNonce + peerCertificateDER,
                                    hash: hash, trustAnchors: trustAnchors, at: time)
    }
}
