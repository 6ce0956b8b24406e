internal import COpenSSL

/// The keyUsage bits of a certificate (bit values as OpenSSL's `X509_get_key_usage`).
package struct KeyUsage: OptionSet, Sendable, Hashable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Signing data (TLS handshakes, device-auth signatures).
    package static let digitalSignature = KeyUsage(rawValue: 0x0080)
    /// Encrypting keys (RSA key transport in TLS 1.2).
    package static let keyEncipherment = KeyUsage(rawValue: 0x0020)
    /// Signing certificates (CAs).
    package static let keyCertSign = KeyUsage(rawValue: 0x0004)
    /// Signing revocation lists (CAs).
    package static let cRLSign = KeyUsage(rawValue: 0x0002)

    var extensionValue: String {
        var names: [String] = []
        if contains(.digitalSignature) { names.append("digitalSignature") }
        if contains(.keyEncipherment) { names.append("keyEncipherment") }
        if contains(.keyCertSign) { names.append("keyCertSign") }
        if contains(.cRLSign) { names.append("cRLSign") }
        return names.joined(separator: ",")
    }
}

/// Describes a certificate to build; ``selfSigned(key:)`` or ``issued(subjectKey:issuer:issuerKey:)``
/// makes it. Signatures are SHA-256 (RSA PKCS#1 v1.5 or ECDSA, after the signing key).
///
/// Every certificate gets a random positive 128-bit serial number, version 3, a critical
/// basicConstraints, a critical keyUsage (when not empty) and a subjectKeyIdentifier;
/// issued ones also get an authorityKeyIdentifier.
package struct CertificateBuilder: Sendable {
    /// Subject common name (UTF-8).
    package var commonName: String
    /// Optional subject organisation (O).
    package var organization: String?
    /// Start of validity, seconds since 1970.
    package var notBefore: Int64
    /// End of validity (inclusive), seconds since 1970.
    package var notAfter: Int64
    /// basicConstraints CA flag.
    package var isCertificateAuthority = false
    /// basicConstraints pathlen (CAs only); nil = unlimited.
    package var pathLength: Int?
    /// keyUsage bits; empty = no keyUsage extension.
    package var keyUsage: KeyUsage = [.digitalSignature]
    /// extendedKeyUsage purposes by OpenSSL name (`serverAuth`, `clientAuth`); empty = none.
    package var extendedKeyUsage: [String] = []
    /// certificatePolicies OIDs (dotted), e.g. Cast's audio-only policy; empty = no extension.
    package var policies: [String] = []

    /// A leaf profile (CA:FALSE, digitalSignature) valid from `notBefore` to `notAfter`.
    package init(commonName: String, notBefore: Int64, notAfter: Int64) {
        self.commonName = commonName
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Builds the certificate signed by its own key (issuer = subject).
    package func selfSigned(key: PrivateKey) throws(CryptoError) -> Certificate {
        try build(subjectKey: key, issuer: nil, signingKey: key)
    }

    /// Builds a certificate for `subjectKey`'s public half, signed by `issuerKey`, naming
    /// `issuer`'s subject as its issuer. Fails when `issuerKey` does not belong to `issuer`.
    package func issued(subjectKey: PrivateKey, issuer: Certificate, issuerKey: PrivateKey) throws(CryptoError) -> Certificate {
        guard issuerKey.matches(issuer) else {
            throw .certificate("the issuer key does not match the issuer certificate \(issuer.commonName ?? "(no CN)")")
        }
        return try build(subjectKey: subjectKey, issuer: issuer, signingKey: issuerKey)
    }

    private func build(subjectKey: PrivateKey, issuer: Certificate?, signingKey: PrivateKey) throws(CryptoError) -> Certificate {
        guard notBefore <= notAfter else {
            throw .certificate("validity of \"\(commonName)\" ends (\(notAfter)) before it starts (\(notBefore))")
        }
        guard let x509 = X509_new() else { throw .certificate(OpenSSLErrors.message("X509_new failed")) }
        var owned: OpaquePointer? = x509
        defer { if let owned { X509_free(owned) } }

        try check(X509_set_version(x509, 2) == 1, "set version 3")
        try setSerial(x509)
        try check(ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore)) != nil, "set notBefore \(notBefore)")
        try check(ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter)) != nil, "set notAfter \(notAfter)")
        try setSubject(x509)
        let issuerName = issuer.map { X509_get_subject_name($0.handle.pointer) } ?? X509_get_subject_name(x509)
        try check(X509_set_issuer_name(x509, issuerName) == 1, "set the issuer name")
        try setPublicKey(x509, subjectKey)

        var ctx = X509V3_CTX()
        X509V3_set_ctx(&ctx, issuer?.handle.pointer ?? x509, x509, nil, nil, 0)
        var basic = isCertificateAuthority ? "critical,CA:TRUE" : "critical,CA:FALSE"
        if isCertificateAuthority, let pathLength { basic += ",pathlen:\(pathLength)" }
        try addExtension(x509, &ctx, NID_basic_constraints, basic)
        if !keyUsage.isEmpty { try addExtension(x509, &ctx, NID_key_usage, "critical," + keyUsage.extensionValue) }
        if !extendedKeyUsage.isEmpty {
            try addExtension(x509, &ctx, NID_ext_key_usage, extendedKeyUsage.joined(separator: ","))
        }
        if !policies.isEmpty {
            // certificatePolicies is a "raw" extension: OpenSSL wants a config database even for
            // plain OIDs, so lend it an empty one.
            let conf = NCONF_new(nil)
            defer { NCONF_free(conf) }
            X509V3_set_nconf(&ctx, conf)
            try addExtension(x509, &ctx, NID_certificate_policies, policies.joined(separator: ","))
        }
        try addExtension(x509, &ctx, NID_subject_key_identifier, "hash")
        if issuer != nil { try addExtension(x509, &ctx, NID_authority_key_identifier, "keyid") }

        try check(X509_sign(x509, signingKey.handle.pointer, EVP_sha256()) > 0,
                  "sign with the \(signingKey.kind) key")
        owned = nil
        guard let certificate = Certificate(taking: x509, subjectKey: subjectKey.handle) else {
            throw .certificate(OpenSSLErrors.message("cannot DER-encode \"\(commonName)\""))
        }
        return certificate
    }

    /// Copies the subject key's algorithm and key bits into the certificate without
    /// `X509_set_pubkey`, which runs OpenSSL 3.0's encoder and decoder (~220 µs). Falls back to
    /// it for keys whose parts were not cached (unusual algorithm parameters).
    ///
    /// The certificate then has no decoded key of its own (re-parsing would cost ~200 µs):
    /// ``Certificate`` keeps `subjectKey` for that, and ``CertificateChainVerifier`` re-parses.
    private func setPublicKey(_ x509: OpaquePointer, _ key: PrivateKey) throws(CryptoError) {
        guard let parts = key.handle.publicKeyParts else {
            return try check(X509_set_pubkey(x509, key.handle.pointer) == 1, "set the public key")
        }
        // OBJ_nid2obj returns static objects: X509_PUBKEY_set0_param may own them (freeing is a no-op).
        guard let object = OBJ_nid2obj(parts.algorithm) else { return try check(false, "look up the key algorithm") }
        var parameter: UnsafeMutableRawPointer?
        if let curve = parts.curve {
            guard let curveObject = OBJ_nid2obj(curve) else { return try check(false, "look up the key curve") }
            parameter = UnsafeMutableRawPointer(curveObject)
        }
        let count = parts.bits.count
        guard let copy = CRYPTO_malloc(count, #fileID, #line)?.assumingMemoryBound(to: UInt8.self) else {
            return try check(false, "allocate the public key")
        }
        parts.bits.withUnsafeBufferPointer { copy.update(from: $0.baseAddress!, count: count) }
        let ok = X509_PUBKEY_set0_param(X509_get_X509_PUBKEY(x509), object, parts.parameterType, parameter, copy,
                                        Int32(count))
        if ok != 1 { CRYPTO_free(copy, #fileID, #line) }
        try check(ok == 1, "set the public key")
    }

    private func check(_ ok: Bool, _ step: String) throws(CryptoError) {
        if !ok { throw .certificate(OpenSSLErrors.message("cannot \(step) for \"\(commonName)\"")) }
    }

    private func setSerial(_ x509: OpaquePointer) throws(CryptoError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        try check(bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, 16) } == 1, "draw a random serial")
        bytes[0] = (bytes[0] & 0x7F) | 0x40  // positive, always 16 bytes long
        guard let bn = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, 16, nil) }) else {
            return try check(false, "convert the serial number")
        }
        defer { BN_free(bn) }
        try check(BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil, "set the serial number")
    }

    private func setSubject(_ x509: OpaquePointer) throws(CryptoError) {
        guard let name = X509_NAME_new() else { return try check(false, "allocate a name") }
        defer { X509_NAME_free(name) }
        if let organization {
            try addNameEntry(name, NID_organizationName, organization)
        }
        try addNameEntry(name, NID_commonName, commonName)
        try check(X509_set_subject_name(x509, name) == 1, "set the subject name")
    }

    private func addNameEntry(_ name: OpaquePointer, _ nid: Int32, _ value: String) throws(CryptoError) {
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else {
            return try check(false, "use a name entry of \(bytes.count) bytes (1…64 allowed)")
        }
        let ok = bytes.withUnsafeBufferPointer {
            X509_NAME_add_entry_by_NID(name, nid, MBSTRING_UTF8, $0.baseAddress, Int32($0.count), -1, 0)
        }
        try check(ok == 1, "add name entry \"\(value)\"")
    }

    private func addExtension(_ x509: OpaquePointer, _ ctx: inout X509V3_CTX, _ nid: Int32,
                              _ value: String) throws(CryptoError) {
        guard let ext = X509V3_EXT_conf_nid(nil, &ctx, nid, value) else {
            return try check(false, "build extension \(nid) = \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        try check(X509_add_ext(x509, ext, -1) == 1, "add extension \(nid)")
    }
}

extension Certificate {
    /// A self-signed leaf (CA:FALSE, `keyUsage`; serverAuth + clientAuth), e.g. a TLS identity.
    package static func selfSigned(commonName: String, key: PrivateKey, notBefore: Int64,
                                  notAfter: Int64, keyUsage: KeyUsage = [.digitalSignature]) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(commonName: commonName, notBefore: notBefore, notAfter: notAfter)
        builder.keyUsage = keyUsage
        builder.extendedKeyUsage = ["serverAuth", "clientAuth"]
        return try builder.selfSigned(key: key)
    }

    /// A CA certificate (CA:TRUE, keyCertSign + cRLSign): self-signed root when `issuer` is nil,
    /// otherwise an intermediate signed by `issuer`.
    package static func certificateAuthority(commonName: String, key: PrivateKey, notBefore: Int64, notAfter: Int64,
                                            pathLength: Int? = nil,
                                            issuer: (certificate: Certificate, key: PrivateKey)? = nil) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(commonName: commonName, notBefore: notBefore, notAfter: notAfter)
        builder.isCertificateAuthority = true
        builder.pathLength = pathLength
        builder.keyUsage = [.keyCertSign, .cRLSign]
        guard let issuer else { return try builder.selfSigned(key: key) }
        return try builder.issued(subjectKey: key, issuer: issuer.certificate, issuerKey: issuer.key)
    }

    /// A leaf (CA:FALSE, digitalSignature) for `subjectKey`, signed by `issuer`, with
    /// certificatePolicies `policies` when not empty.
    package static func leaf(commonName: String, subjectKey: PrivateKey, issuer: Certificate, issuerKey: PrivateKey,
                            notBefore: Int64, notAfter: Int64, policies: [String] = []) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(commonName: commonName, notBefore: notBefore, notAfter: notAfter)
        builder.policies = policies
        return try builder.issued(subjectKey: subjectKey, issuer: issuer, issuerKey: issuerKey)
    }
}
