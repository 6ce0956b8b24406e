import CastProtocol
import Foundation
import SwiftProtobuf
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
    private let deviceCertificateDER: Data
    private let intermediatesDER: [Data]

    /// A responder for one device: it signs with `credentials.deviceAuthKey` and sends the
    /// device certificate plus `credentials.intermediateCertificates`.
    public init(credentials: DeviceCredentials) {
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
        deviceCertificateDER = Data(credentials.deviceAuthCertificate.derBytes)
        intermediatesDER = intermediates.map { Data($0.derBytes) }
    }

    /// The reply to `challengeBytes` (a serialized `DeviceAuthMessage`): a response or an error.
    public func respond(to challengeBytes: [UInt8]) -> [UInt8] { reply(to: challengeBytes).bytes }

    /// The reply to `challengeBytes` with its ``Outcome``.
    public func reply(to challengeBytes: [UInt8]) -> Reply {
        let message: Cast_Channel_DeviceAuthMessage
        do {
            message = try Cast_Channel_DeviceAuthMessage(serializedBytes: challengeBytes)
        } catch {
            return Self.error(.internalError, "\(challengeBytes.count) bytes are not a DeviceAuthMessage (\(error))")
        }
        guard message.hasChallenge else { return Self.error(.internalError, "no challenge in the message") }
        if message.hasResponse || message.hasError {
            return Self.error(.internalError, "challenge mixed with a response or error")
        }
        let challenge = message.challenge
        let unknown = UnknownVarints(challenge.unknownFields.data)
        if let value = unknown.first(field: 1) {
            return Self.error(.signatureAlgorithmUnavailable, "unknown signature_algorithm \(value)")
        }
        if let value = unknown.first(field: 3) {
            return Self.error(.signatureAlgorithmUnavailable, "unknown hash_algorithm \(value)")
        }
        switch challenge.signatureAlgorithm {
        case .unspecified, .rsassaPkcs1V15: break
        case .rsassaPss: return Self.error(.signatureAlgorithmUnavailable, "RSASSA-PSS is not supported")
        }
        let hash: DigestAlgorithm = challenge.hashAlgorithm == .sha256 ? .sha256 : .sha1
        let nonce = challenge.hasSenderNonce ? [UInt8](challenge.senderNonce) : []
        let signature: [UInt8]
        do {
            signature = try Signature.sign(nonce + tlsCertificateDER, key: signingKey, digest: hash)
        } catch {
            return Self.error(.internalError, "signing failed: \(error)")
        }
        var response = Cast_Channel_AuthResponse()
        response.signature = Data(signature)
        response.clientAuthCertificate = deviceCertificateDER
        response.intermediateCertificate = intermediatesDER
        response.signatureAlgorithm = .rsassaPkcs1V15
        response.hashAlgorithm = hash == .sha256 ? .sha256 : .sha1
        if challenge.hasSenderNonce { response.senderNonce = challenge.senderNonce }
        var reply = Cast_Channel_DeviceAuthMessage()
        reply.response = response
        guard let bytes: [UInt8] = try? reply.serializedBytes() else {
            return Self.error(.internalError, "cannot serialize the response")
        }
        return Reply(bytes: bytes, outcome: .answered(hash: hash, nonceLength: nonce.count))
    }

    private static func error(_ type: Cast_Channel_AuthError.ErrorType, _ reason: String) -> Reply {
        var message = Cast_Channel_DeviceAuthMessage()
        message.error.errorType = type
        // An AuthError with its one required field set always serializes.
        let bytes: [UInt8] = (try? message.serializedBytes()) ?? []
        return Reply(bytes: bytes, outcome: .rejected(reason: reason))
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
        public let deviceCertificate: Certificate
        /// The digest the device used.
        public let hash: DigestAlgorithm
        /// The nonce the device echoed (empty when none).
        public let senderNonce: [UInt8]
        /// The device or an intermediate certificate carries Cast's audio-only policy: the
        /// device must only be sent audio (speakers, Chromecast Audio).
        public let audioOnly: Bool
    }

    /// The roots device chains must end at.
    public let trustAnchors: [Certificate]

    /// A verifier trusting `trustAnchors` (e.g. ``SimulatorAuthority/rootCertificate``).
    public init(trustAnchors: [Certificate]) { self.trustAnchors = trustAnchors }

    /// A verifier trusting every certificate of a PEM bundle (e.g. an exported simulator root).
    public init(trustAnchorsPEM: String) throws(CryptoError) {
        let anchors = try Certificate.all(fromPEM: trustAnchorsPEM)
        guard !anchors.isEmpty else { throw .certificate("the trust-anchor PEM holds no certificate") }
        trustAnchors = anchors
    }

    /// A serialized challenge: `DeviceAuthMessage{challenge{sender_nonce?, hash_algorithm?}}`
    /// (a field is left out when nil, so the device uses its default).
    public static func challenge(nonce: [UInt8]?, hash: DigestAlgorithm?) -> [UInt8] {
        var message = Cast_Channel_DeviceAuthMessage()
        message.challenge = Cast_Channel_AuthChallenge()
        if let nonce { message.challenge.senderNonce = Data(nonce) }
        if let hash { message.challenge.hashAlgorithm = hash == .sha256 ? .sha256 : .sha1 }
        return (try? message.serializedBytes()) ?? []
    }

    /// Verifies one reply received on a TLS connection whose peer certificate is
    /// `peerCertificateDER`. `expectedNonce`, when given, must equal the echoed nonce.
    public func verify(reply replyBytes: [UInt8], peerCertificateDER: [UInt8], expectedNonce: [UInt8]? = nil,
                       at time: Int64 = UnixTime.now) throws(DeviceAuthError) -> Verified {
        let message: Cast_Channel_DeviceAuthMessage
        do { message = try Cast_Channel_DeviceAuthMessage(serializedBytes: replyBytes) } catch {
            throw .malformedReply("\(replyBytes.count) bytes are not a DeviceAuthMessage (\(error))")
        }
        if message.hasError { throw .deviceReportedError(errorType: message.error.errorType.rawValue) }
        guard message.hasResponse else { throw .malformedReply("no response in the message") }
        let response = message.response
        if response.signatureAlgorithm == .rsassaPss { throw .malformedReply("RSASSA-PSS signatures are not supported") }
        let hash: DigestAlgorithm = response.hashAlgorithm == .sha256 ? .sha256 : .sha1
        let nonce = [UInt8](response.senderNonce)
        let device = try DeviceAuthCheck.verifyReply(
            signature: [UInt8](response.signature), deviceCertificateDER: [UInt8](response.clientAuthCertificate),
            intermediatesDER: response.intermediateCertificate.map { [UInt8]($0) }, senderNonce: nonce,
            expectedNonce: expectedNonce, peerCertificateDER: peerCertificateDER, hash: hash,
            trustAnchors: trustAnchors, at: time)
        let intermediates = response.intermediateCertificate.compactMap { try? Certificate(derBytes: [UInt8]($0)) }
        let audioOnly = ([device] + intermediates).contains { $0.policyOIDs.contains(DeviceCredentials.audioOnlyPolicyOID) }
        return Verified(deviceCertificate: device, hash: hash, senderNonce: nonce, audioOnly: audioOnly)
    }
}

/// Varint fields of protobuf unknown-field bytes: proto2 keeps an enum value it does not know
/// there, so an unknown `signature_algorithm` is only visible this way. Stops at the first
/// malformed byte.
private struct UnknownVarints {
    private var fields: [(number: UInt64, value: UInt64)] = []

    init(_ data: Data) {
        let bytes = [UInt8](data)
        var index = 0
        func varint() -> UInt64? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.count, shift < 64 {
                let byte = bytes[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            return nil
        }
        while index < bytes.count, let tag = varint() {
            switch tag & 7 {
            case 0:
                guard let value = varint() else { return }
                fields.append((tag >> 3, value))
            case 1: index += 8
            case 2:
                guard let length = varint(), length <= UInt64(bytes.count - index) else { return }
                index += Int(length)
            case 3, 4: continue
            case 5: index += 4
            default: return
            }
        }
    }

    func first(field number: UInt64) -> UInt64? { fields.first { $0.number == number }?.value }
}
