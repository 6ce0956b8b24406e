internal import COpenSSL

/// The message digest under a signature.
public enum DigestAlgorithm: String, Sendable, Equatable, CaseIterable {
    /// SHA-1: the Cast device-auth default.
    case sha1
    /// SHA-256.
    case sha256

    var evp: OpaquePointer? {
        switch self {
        case .sha1: return EVP_sha1()
        case .sha256: return EVP_sha256()
        }
    }
}

/// Signatures with a private key and their verification against a certificate: RSASSA-PKCS1-v1_5
/// for RSA keys (what Cast device auth uses), ECDSA (DER-encoded) for EC keys.
package enum Signature {
    /// Signs `data` (hashed with `digest`) with `key`.
    package static func sign(_ data: [UInt8], key: PrivateKey, digest: DigestAlgorithm) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw .signing(OpenSSLErrors.message("EVP_MD_CTX_new failed")) }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestSignInit(ctx, &pctx, digest.evp, nil, key.handle.pointer) == 1 else {
            throw .signing(OpenSSLErrors.message("cannot start a \(digest) signature with the \(key.kind) key"))
        }
        if case .rsa = key.kind, let pctx, EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1 {
            throw .signing(OpenSSLErrors.message("cannot select RSASSA-PKCS1-v1_5 padding"))
        }
        var length = 0
        let sized = data.withUnsafeBufferPointer { EVP_DigestSign(ctx, nil, &length, $0.baseAddress, $0.count) }
        guard sized == 1, length > 0 else {
            throw .signing(OpenSSLErrors.message("cannot size a \(digest) signature over \(data.count) bytes"))
        }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            data.withUnsafeBufferPointer { EVP_DigestSign(ctx, out.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        guard signed == 1 else {
            throw .signing(OpenSSLErrors.message("\(digest) signature over \(data.count) bytes failed"))
        }
        signature.removeSubrange(length...)
        return signature
    }

    /// True when `signature` over `data` (hashed with `digest`) verifies with `certificate`'s
    /// public key. Any malformed input is simply `false`.
    package static func verify(_ signature: [UInt8], data: [UInt8], certificate: Certificate,
                              digest: DigestAlgorithm) -> Bool {
        defer { OpenSSLErrors.clear() }
        guard !signature.isEmpty, let key = certificate.publicKey,
              let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit(ctx, &pctx, digest.evp, nil, key) == 1 else { return false }
        if EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA, let pctx,
           EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) != 1 { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { EVP_DigestVerify(ctx, sig.baseAddress, sig.count, $0.baseAddress, $0.count) }
        }
        return result == 1
    }
}

/// One-shot message digests.
package enum Digest {
    /// SHA-256 of `data` (32 bytes).
    package static func sha256(_ data: [UInt8]) -> [UInt8] { hash(data, .sha256, size: 32) }

    /// SHA-1 of `data` (20 bytes).
    package static func sha1(_ data: [UInt8]) -> [UInt8] { hash(data, .sha1, size: 20) }

    private static func hash(_ data: [UInt8], _ algorithm: DigestAlgorithm, size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { o in
            data.withUnsafeBufferPointer { EVP_Digest($0.baseAddress, $0.count, o.baseAddress, &length, algorithm.evp, nil) }
        }
        // EVP_Digest only fails on allocation failure; a digest of the wrong size would be a bug.
        precondition(ok == 1 && Int(length) == size, "EVP_Digest(\(algorithm)) failed: \(OpenSSLErrors.drain())")
        return Array(out[0..<size])
    }
}
