import CastProtocol
import SystemCrypto

/// Answers Cast device-auth challenges (`urn:x-cast:com.google.cast.tp.deviceauth`) like a
/// device: `AuthResponse{signature, client_auth_certificate, intermediate_certificate[],
/// signature_algorithm = RSASSA_PKCS1v15, sender_nonce (echoed when sent), hash_algorithm}`,
/// the signature being RSASSA-PKCS1-v1_5 with SHA-1 (default) or SHA-256 over
/// `sender_nonce || DER(the device's TLS certificate)` (openscreen `DeviceAuthNamespaceHandler`).
///
/// Any other input gets `AuthError`: `INTERNAL_ERROR` when the bytes are not a
/// `DeviceAuthMessage`, carry no challenge, or mix it with a response or error (openscreen's
/// receiver stays silent there; answering makes the problem visible to the sender);
/// `SIGNATURE_ALGORITHM_UNAVAILABLE` for RSASSA-PSS or an unknown signature or hash algorithm.
/// Never traps, whatever the input.
public struct DeviceAuthResponder: Sendable {
    /// What happened to one challenge, for logs.
    public enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// Signed with `hash` over a nonce of `nonceLength` bytes (0 when none was sent).
        case answered(hash: DigestAlgorithm, nonceLength: Int)
        /// Answered with an `AuthError`; `reason` says why.
        case rejected(reason: String)

        public var description: String {
            switch self {
            case .answered(let hash, let nonceLength): return "answered (\(hash), \(nonceLength)-byte nonce)"
            case .rejected(let reason): return "rejected: \(reason)"
            }
        }
    }

    /// A serialized `DeviceAuthMessage` to send back and what it says.
    public struct Reply: Sendable {
        /// The `payload_binary` of the reply.
        public let bytes: [UInt8]
        /// Whether the challenge was answered, for logs.
        public let outcome: Outcome
    }

    private let signingKey: PrivateKey
    private let tlsCertificateDER: [UInt8]
    private let deviceCertificateDER: [UInt8]
    private let intermediatesDER: [[UInt8]]

    /// A responder for one device: it signs with `credentials.deviceAuthKey` and sends the
    /// device certificate plus `credentials.intermediateCertificates`.
    package init(credentials: DeviceCredentials) {
        self.init(credentials: credentials, intermediates: credentials.intermediateCertificates)
    }

    /// A responder for one device whose chain is `authority`'s intermediate (the one that issued
    /// `credentials`).
    public init(credentials: DeviceCredentials, authority: SimulatorAuthority) {
        self.init(credentials: credentials, intermediates: [authority.intermediateCertificate])
    }

    private init(credentials: DeviceCredentials, intermediates: [Certificate]) {
        signingKey = credentials.deviceAuthKey
        tlsCertificateDER = credentials.tlsCertificateDER
        deviceCertificateDER = credentials.deviceAuthCertificate.derBytes
        intermediatesDER = intermediates.map(\.derBytes)
    }

    /// The reply to `challengeBytes` (a serialized `DeviceAuthMessage`): a response or an error.
    package func respond(to challengeBytes: [UInt8]) -> [UInt8] { reply(to: challengeBytes).bytes }

    /// The reply to `challengeBytes` with its ``Outcome``.
    public func reply(to challengeBytes: [UInt8]) -> Reply {
        let message: DeviceAuthMessage
        do {
            message = try DeviceAuthMessage(decoding: challengeBytes)
        } catch {
            return Self.error(.internalError, "\(challengeBytes.count) bytes are not a DeviceAuthMessage (\(error))")
        }
        guard let challenge = message.challenge else { return Self.error(.internalError, "no challenge in the message") }
        if message.response != nil || message.error != nil {
            return Self.error(.internalError, "challenge mixed with a response or error")
        }
        if let value = challenge.unknownSignatureAlgorithm {
            return Self.error(.signatureAlgorithmUnavailable, "unknown signature_algorithm \(value)")
        }
        if let value = challenge.unknownHashAlgorithm {
            return Self.error(.signatureAlgorithmUnavailable, "unknown hash_algorithm \(value)")
        }
        switch challenge.signatureAlgorithm ?? .rsassaPKCS1v15 {
        case .unspecified, .rsassaPKCS1v15: break
        case .rsassaPSS: return Self.error(.signatureAlgorithmUnavailable, "RSASSA-PSS is not supported")
        }
        let hash = DigestAlgorithm(challenge.hashAlgorithm ?? .sha1)
        let nonce = challenge.senderNonce ?? []
        let signature: [UInt8]
        do {
            signature = try Signature.sign(nonce + tlsCertificateDER, key: signingKey, digest: hash)
        } catch {
            return Self.error(.internalError, "signing failed: \(error)")
        }
        let response = AuthResponse(
            signature: signature, clientAuthCertificate: deviceCertificateDER, intermediateCertificates: intermediatesDER,
            signatureAlgorithm: .rsassaPKCS1v15, senderNonce: challenge.senderNonce, hashAlgorithm: AuthHashAlgorithm(hash))
        return Reply(bytes: DeviceAuthMessage(response: response).serialized(), outcome: .answered(hash: hash, nonceLength: nonce.count))
    }

    private static func error(_ type: AuthError.ErrorType, _ reason: String) -> Reply {
        Reply(bytes: DeviceAuthMessage(error: AuthError(errorType: type)).serialized(), outcome: .rejected(reason: reason))
    }
}

/// What a sender checks in a device-auth reply (openscreen `AuthenticateChallengeReply`):
/// decodes the `DeviceAuthMessage`, then ``DeviceAuthCheck/verifyReply`` (peer TLS certificate
/// valid now and for at most 4 more days, chain to a trust anchor, signature over
/// `sender_nonce || peer certificate DER`).
public struct DeviceAuthVerifier: Sendable {
    /// What a verified reply proved.
    public struct Verified: Sendable {
        /// The device certificate that signed.
        package let deviceCertificate: Certificate
        /// The digest the device used.
        package let hash: DigestAlgorithm
        /// The nonce the device echoed (empty when none).
        package let senderNonce: [UInt8]
        /// The device or an intermediate certificate carries Cast's audio-only policy: the
        /// device must only be sent audio (speakers, Chromecast Audio).
        package let audioOnly: Bool
    }

    /// The roots device chains must end at.
    package let trustAnchors: [Certificate]

    /// A verifier trusting `trustAnchors` (e.g. ``SimulatorAuthority/rootCertificate``).
    public init(trustAnchors: [Certificate]) { self.trustAnchors = trustAnchors }

    /// A verifier trusting every certificate of a PEM bundle (e.g. an exported simulator root).
    package init(trustAnchorsPEM: String) throws(CryptoError) {
        let anchors = try Certificate.all(fromPEM: trustAnchorsPEM)
        guard !anchors.isEmpty else { throw .certificate("the trust-anchor PEM holds no certificate") }
        trustAnchors = anchors
    }

    /// A serialized challenge: `DeviceAuthMessage{challenge{sender_nonce?, hash_algorithm?}}`
    /// (a field is left out when nil, so the device uses its default).
    package static func challenge(nonce: [UInt8]?, hash: DigestAlgorithm?) -> [UInt8] {
        let challenge = AuthChallenge(senderNonce: nonce, hashAlgorithm: hash.map(AuthHashAlgorithm.init))
        return DeviceAuthMessage(challenge: challenge).serialized()
    }

    /// Verifies one reply received on a TLS connection whose peer certificate is
    /// `peerCertificateDER`. `expectedNonce`, when given, must equal the echoed nonce.
    public func verify(reply replyBytes: [UInt8], peerCertificateDER: [UInt8], expectedNonce: [UInt8]? = nil,
                       at time: Int64 = UnixTime.now) throws(DeviceAuthError) -> Verified {
        let message: DeviceAuthMessage
        do { message = try DeviceAuthMessage(decoding: replyBytes) } catch {
            throw .malformedReply("\(replyBytes.count) bytes are not a DeviceAuthMessage (\(error))")
        }
        if let error = message.error { throw .deviceReportedError(errorType: Int(error.errorType.rawValue)) }
        guard let response = message.response else { throw .malformedReply("no response in the message") }
        if response.signatureAlgorithm == .rsassaPSS { throw .malformedReply("RSASSA-PSS signatures are not supported") }
        let hash = DigestAlgorithm(response.hashAlgorithm ?? .sha1)
        let nonce = response.senderNonce ?? []
        let device = try DeviceAuthCheck.verifyReply(
            signature: response.signature, deviceCertificateDER: response.clientAuthCertificate,
            intermediatesDER: response.intermediateCertificates, senderNonce: nonce,
            expectedNonce: expectedNonce, peerCertificateDER: peerCertificateDER, hash: hash,
            trustAnchors: trustAnchors, at: time)
        let intermediates = response.intermediateCertificates.compactMap { try? Certificate(derBytes: $0) }
        let audioOnly = ([device] + intermediates).contains { $0.policyOIDs.contains(DeviceCredentials.audioOnlyPolicyOID) }
        return Verified(deviceCertificate: device, hash: hash, senderNonce: nonce, audioOnly: audioOnly)
    }
}

extension DigestAlgorithm {
    init(_ hash: AuthHashAlgorithm) { self = hash == .sha256 ? .sha256 : .sha1 }
}

extension AuthHashAlgorithm {
    init(_ digest: DigestAlgorithm) { self = digest == .sha256 ? .sha256 : .sha1 }
}
