internal import COpenSSL

/// Why a certificate chain did not verify.
public enum ChainVerificationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A certificate of the chain had expired at the verification time.
    case expired(commonName: String)
    /// A certificate of the chain was not yet valid at the verification time.
    case notYetValid(commonName: String)
    /// No path leads from the leaf to one of the trust anchors.
    case untrusted(String)
    /// A signature in the chain does not verify with its issuer's key.
    case badSignature(String)
    /// An issuer is not allowed to sign certificates (no CA:TRUE, no keyCertSign, path length).
    case invalidIssuer(String)
    /// No trust anchors were given.
    case noTrustAnchors
    /// Any other OpenSSL verification failure (`X509_V_ERR_*` code and OpenSSL's text).
    case other(code: Int, message: String)

    public var description: String {
        switch self {
        case .expired(let name): return "certificate \"\(name)\" has expired"
        case .notYetValid(let name): return "certificate \"\(name)\" is not yet valid"
        case .untrusted(let message): return "untrusted chain: \(message)"
        case .badSignature(let message): return "bad signature in chain: \(message)"
        case .invalidIssuer(let message): return "invalid issuer: \(message)"
        case .noTrustAnchors: return "no trust anchors given"
        case .other(let code, let message): return "chain verification failed (X509_V_ERR \(code)): \(message)"
        }
    }
}

/// Verifies a leaf certificate plus untrusted intermediates up to one of a set of trust
/// anchors (self-signed roots) at a given time, with OpenSSL's `X509_verify_cert`.
///
/// Immutable and `Sendable`: each ``verify(_:intermediates:at:)`` builds its own store.
package struct CertificateChainVerifier: Sendable {
    /// The roots a chain must end at.
    package let trustAnchors: [Certificate]

    /// A verifier trusting exactly `trustAnchors`.
    package init(trustAnchors: [Certificate]) { self.trustAnchors = trustAnchors }

    /// A verifier trusting every certificate of a PEM bundle.
    package init(trustAnchorsPEM: String) throws(CryptoError) {
        let anchors = try Certificate.all(fromPEM: trustAnchorsPEM)
        guard !anchors.isEmpty else { throw .certificate("the trust-anchor PEM holds no certificate") }
        self.init(trustAnchors: anchors)
    }

    /// Checks that `leaf` chains through `intermediates` to a trust anchor and that every
    /// certificate on the path is valid at `time` (seconds since 1970).
    /// - Returns: the verified path, leaf first, trust anchor last.
    @discardableResult
    package func verify(_ leaf: Certificate, intermediates: [Certificate] = [],
                       at time: Int64 = UnixTime.now) throws(ChainVerificationError) -> [Certificate] {
        guard !trustAnchors.isEmpty else { throw .noTrustAnchors }
        // X509_verify_cert reads keys from the X509 objects: give built certificates decoded ones.
        let trustAnchors = trustAnchors.map { $0.decoded() }
        let intermediates = intermediates.map { $0.decoded() }
        let leaf = leaf.decoded()
        defer { OpenSSLErrors.clear() }
        guard let store = X509_STORE_new() else { throw .other(code: -1, message: OpenSSLErrors.drain()) }
        defer { X509_STORE_free(store) }
        for anchor in trustAnchors where X509_STORE_add_cert(store, anchor.handle.pointer) != 1 {
            // A duplicate anchor is harmless; any other failure leaves the store incomplete.
            OpenSSLErrors.clear()
        }
        guard let untrusted = OPENSSL_sk_new_null() else { throw .other(code: -1, message: OpenSSLErrors.drain()) }
        defer { OPENSSL_sk_free(untrusted) }  // the certificates belong to `intermediates`
        for certificate in intermediates {
            guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.handle.pointer)) > 0 else {
                throw .other(code: -1, message: OpenSSLErrors.drain())
            }
        }
        guard let ctx = X509_STORE_CTX_new() else { throw .other(code: -1, message: OpenSSLErrors.drain()) }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, leaf.handle.pointer, untrusted) == 1 else {
            throw .other(code: -1, message: OpenSSLErrors.drain())
        }
        X509_STORE_CTX_set_time(ctx, 0, time_t(time))
        let path = intermediates + [leaf] + trustAnchors  // keep the handles alive until the end
        let verified = withExtendedLifetime(path) { X509_verify_cert(ctx) }
        guard verified == 1 else { throw Self.error(ctx) }
        guard let chain = X509_STORE_CTX_get0_chain(ctx) else { return [leaf] }
        var result: [Certificate] = []
        for index in 0..<OPENSSL_sk_num(chain) {
            guard let raw = OPENSSL_sk_value(chain, index) else { continue }
            let pointer = OpaquePointer(raw)
            if let known = path.first(where: { $0.handle.pointer == pointer }) { result.append(known) }
        }
        return result
    }

    private static func error(_ ctx: OpaquePointer) -> ChainVerificationError {
        let code = X509_STORE_CTX_get_error(ctx)
        let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown error"
        var subject = "?"
        if let current = X509_STORE_CTX_get_current_cert(ctx), let name = X509_get_subject_name(current) {
            let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
            if index >= 0, let entry = X509_NAME_get_entry(name, index), let data = X509_NAME_ENTRY_get_data(entry),
               let bytes = ASN1_STRING_get0_data(data) {
                subject = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))),
                                 as: UTF8.self)
            }
        }
        let detail = "\(message) (at \"\(subject)\")"
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired(commonName: subject)
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid(commonName: subject)
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
             X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_CERT_UNTRUSTED:
            return .untrusted(detail)
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
             X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY:
            return .badSignature(detail)
        case X509_V_ERR_INVALID_CA, X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_KEYUSAGE_NO_CERTSIGN:
            return .invalidIssuer(detail)
        default:
            return .other(code: Int(code), message: detail)
        }
    }
}
