internal import COpenSSL

/// An RSA or EC P-256 private key (with its public half), backed by an OpenSSL `EVP_PKEY`.
///
/// Cheap to copy (the key is shared and immutable). Generate with ``generateRSA(bits:)`` or
/// ``generateP256()``, store with ``pkcs8PEM()``, read back with ``init(pem:)``.
package struct PrivateKey: Sendable {
    /// The algorithm and size of a key.
    package enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// RSA with a modulus of `bits` bits.
        case rsa(bits: Int)
        /// ECDSA on the NIST P-256 curve (prime256v1 / secp256r1).
        case p256
        /// Any other key OpenSSL can read (named by its OpenSSL short name).
        case other(String)

        package var description: String {
            switch self {
            case .rsa(let bits): return "RSA-\(bits)"
            case .p256: return "EC P-256"
            case .other(let name): return name
            }
        }
    }

    let handle: KeyHandle

    init(handle: KeyHandle) { self.handle = handle }

    /// A new RSA key (public exponent 65537). 2048 bits cost tens of milliseconds.
    /// - Parameter bits: modulus size, 1024…16384.
    package static func generateRSA(bits: Int = 2048) throws(CryptoError) -> PrivateKey {
        guard (1024...16384).contains(bits) else {
            throw .keyGeneration("RSA key size \(bits) is outside 1024…16384 bits")
        }
        return try generate(id: EVP_PKEY_RSA, what: "RSA-\(bits)") { ctx in
            EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) > 0
        }
    }

    /// A new EC key on P-256: generation and signing take tens of microseconds.
    package static func generateP256() throws(CryptoError) -> PrivateKey {
        try generate(id: EVP_PKEY_EC, what: "EC P-256") { ctx in
            EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, NID_X9_62_prime256v1) > 0
        }
    }

    private static func generate(id: Int32, what: String,
                                 configure: (OpaquePointer) -> Bool) throws(CryptoError) -> PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_id(id, nil) else {
            throw .keyGeneration(OpenSSLErrors.message("cannot create a \(what) key context"))
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) > 0 else {
            throw .keyGeneration(OpenSSLErrors.message("cannot initialise \(what) key generation"))
        }
        guard configure(ctx) else {
            throw .keyGeneration(OpenSSLErrors.message("cannot set the \(what) key parameters"))
        }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen(ctx, &key) > 0, let key else {
            throw .keyGeneration(OpenSSLErrors.message("\(what) key generation failed"))
        }
        return PrivateKey(handle: KeyHandle(taking: key))
    }

    /// Reads a PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`) or the traditional RSA / EC forms.
    /// Encrypted keys are refused (no passphrase callback).
    package init(pem: String) throws(CryptoError) {
        let parsed: OpaquePointer? = MemoryBIO.reading(Array(pem.utf8)) { bio in
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
        }
        guard let parsed else {
            throw .key(OpenSSLErrors.message("no readable private key in \(pem.utf8.count) bytes of PEM"))
        }
        self.init(handle: KeyHandle(taking: parsed))
    }

    /// The key as unencrypted PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
    package func pkcs8PEM() throws(CryptoError) -> String {
        if let der = p256PKCS8() { return Encoding.pem(label: "PRIVATE KEY", der: der) }
        return try encoderPKCS8PEM()
    }

    /// PKCS#8 PEM from OpenSSL's encoder (70–120 µs in OpenSSL 3.0).
    func encoderPKCS8PEM() throws(CryptoError) -> String {
        let bytes = MemoryBIO.writing { bio in
            PEM_write_bio_PKCS8PrivateKey(bio, handle.pointer, nil, nil, 0, nil, nil) == 1
        }
        guard let bytes else { throw .key(OpenSSLErrors.message("cannot encode the \(kind) key as PKCS#8 PEM")) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// PKCS#8 DER of a P-256 key assembled from its scalar and point (a few µs), byte for byte
    /// what OpenSSL's encoder writes (RFC 5915 ECPrivateKey with the public key, no parameters);
    /// nil for other keys.
    private func p256PKCS8() -> [UInt8]? {
        guard let point = KeyHandle.p256PublicPoint(handle.pointer) else { return nil }
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(handle.pointer, "priv", &bn) == 1, let bn else { OpenSSLErrors.clear(); return nil }
        defer { BN_clear_free(bn) }
        var scalar = [UInt8](repeating: 0, count: 32)
        guard scalar.withUnsafeMutableBufferPointer({ BN_bn2binpad(bn, $0.baseAddress, 32) }) == 32 else {
            OpenSSLErrors.clear()
            return nil
        }
        let header: [UInt8] = [
            0x30, 0x81, 0x87, 0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
            0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x04, 0x6D, 0x30, 0x6B, 0x02, 0x01, 0x01,
            0x04, 0x20,
        ]
        return header + scalar + [0xA1, 0x44, 0x03, 0x42, 0x00] + point
    }

    /// The public half as DER `SubjectPublicKeyInfo`.
    package var publicKeyDER: [UInt8] { handle.publicKeyInfo }

    /// Algorithm and size.
    package var kind: Kind { Self.kind(of: handle.pointer) }

    static func kind(of key: OpaquePointer) -> Kind {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            return .rsa(bits: Int(EVP_PKEY_get_bits(key)))
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            let ok = name.withUnsafeMutableBufferPointer {
                EVP_PKEY_get_group_name(key, $0.baseAddress, $0.count, nil)
            }
            let group = ok == 1 ? name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "EC"
            return group == "prime256v1" || group == "P-256" ? .p256 : .other("EC \(group)")
        default:
            guard let type = EVP_PKEY_get0_type_name(key) else { return .other("unknown") }
            return .other(String(cString: type))
        }
    }

    /// True when `certificate` carries this key's public half.
    package func matches(_ certificate: Certificate) -> Bool {
        guard let key = certificate.publicKey else { return false }
        let result = EVP_PKEY_eq(key, handle.pointer) == 1
        OpenSSLErrors.clear()
        return result
    }
}
