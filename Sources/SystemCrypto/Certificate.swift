internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An X.509 certificate: parsed once, immutable, cheap to copy.
///
/// Times are seconds since 1970 (``UnixTime``). Equality compares the DER encoding.
public struct Certificate: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The DER encoding (what the TLS handshake and `AuthResponse` carry).
    package let derBytes: [UInt8]
    let handle: X509Handle
    /// The subject key of a certificate built by ``CertificateBuilder``, whose `X509` holds the
    /// key bits but no decoded `EVP_PKEY` (decoding costs ~200 µs in OpenSSL 3.0); nil when parsed.
    let builtKey: KeyHandle?

    /// Wraps a certificate built or parsed by this module; nil when it cannot be DER-encoded.
    init?(taking x509: OpaquePointer, subjectKey: KeyHandle? = nil) {
        let handle = X509Handle(taking: x509)
        guard let der = Encoding.der(of: x509) else { return nil }
        self.handle = handle
        self.derBytes = der
        self.builtKey = subjectKey
    }

    /// The subject public key for signature checks, or nil when it cannot be decoded.
    var publicKey: OpaquePointer? {
        if let builtKey { return builtKey.pointer }
        guard let key = X509_get0_pubkey(handle.pointer) else { OpenSSLErrors.clear(); return nil }
        return key
    }

    /// This certificate with a decoded key inside its `X509` (what `X509_verify_cert` needs):
    /// itself when parsed, a re-parsed copy when built here.
    func decoded() -> Certificate {
        guard builtKey != nil, let parsed = try? Certificate(derBytes: derBytes) else { return self }
        return parsed
    }

    /// Parses one DER certificate. Trailing bytes after the certificate are refused.
    package init(derBytes: [UInt8]) throws(CryptoError) {
        guard !derBytes.isEmpty else { throw .certificate("empty DER input") }
        let parsed: OpaquePointer? = derBytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let x509 = d2i_X509(nil, &cursor, buffer.count)
            if let x509, let cursor, cursor != buffer.baseAddress! + buffer.count {
                X509_free(x509)
                return nil
            }
            return x509
        }
        guard let parsed, let certificate = Certificate(taking: parsed) else {
            throw .certificate(OpenSSLErrors.message("\(derBytes.count) bytes are not one DER X.509 certificate"))
        }
        self = certificate
    }

    /// Parses the first certificate of a PEM text (`-----BEGIN CERTIFICATE-----`).
    package init(pem: String) throws(CryptoError) {
        guard let first = try Certificate.all(fromPEM: pem).first else {
            throw .certificate("no PEM certificate in \(pem.utf8.count) bytes of text")
        }
        self = first
    }

    /// Every certificate of a PEM bundle, in order; an empty array when there is none.
    /// A malformed block is an error (not skipped).
    package static func all(fromPEM pem: String) throws(CryptoError) -> [Certificate] {
        let result: Result<[Certificate], CryptoError>? = MemoryBIO.reading(Array(pem.utf8)) { bio in
            var certificates: [Certificate] = []
            while true {
                guard let x509 = PEM_read_bio_X509(bio, nil, nil, nil) else {
                    // End of input reads as PEM_R_NO_START_LINE; anything else is a real error.
                    let code = ERR_peek_last_error()
                    if ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE {
                        OpenSSLErrors.clear()
                        return .success(certificates)
                    }
                    return .failure(.certificate(OpenSSLErrors.message(
                        "PEM certificate #\(certificates.count + 1) cannot be parsed")))
                }
                guard let certificate = Certificate(taking: x509) else {
                    return .failure(.certificate(OpenSSLErrors.message("cannot re-encode a PEM certificate")))
                }
                certificates.append(certificate)
            }
        }
        guard let result else { throw .certificate(OpenSSLErrors.message("cannot read PEM input")) }
        return try result.get()
    }

    /// The certificate as PEM text.
    package var pem: String { Encoding.pem(label: "CERTIFICATE", der: derBytes) }

    /// The subject's common name (CN), nil when there is none.
    package var commonName: String? { Self.commonName(of: X509_get_subject_name(handle.pointer)) }

    /// The issuer's common name (CN), nil when there is none.
    package var issuerCommonName: String? { Self.commonName(of: X509_get_issuer_name(handle.pointer)) }

    private static func commonName(of name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { OpenSSLErrors.clear(); return nil }
        defer { CRYPTO_free(utf8, #fileID, #line) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    /// Start of validity, seconds since 1970.
    package var notBefore: Int64 { Self.seconds(X509_get0_notBefore(handle.pointer)) }

    /// End of validity (inclusive), seconds since 1970.
    package var notAfter: Int64 { Self.seconds(X509_get0_notAfter(handle.pointer)) }

    /// `notAfter − notBefore` in seconds.
    package var lifetime: Int64 { notAfter - notBefore }

    private static func seconds(_ time: UnsafePointer<ASN1_TIME>?) -> Int64 {
        guard let time else { return 0 }
        var broken = tm()
        guard ASN1_TIME_to_tm(time, &broken) == 1 else { OpenSSLErrors.clear(); return 0 }
        return Int64(timegm(&broken))
    }

    /// True when `time` lies within `notBefore…notAfter`.
    package func isValid(at time: Int64 = UnixTime.now) -> Bool {
        notBefore <= time && time <= notAfter
    }

    /// True when issuer and subject are the same and the certificate's own key verifies its
    /// signature.
    package var isSelfSigned: Bool {
        guard X509_NAME_cmp(X509_get_subject_name(handle.pointer), X509_get_issuer_name(handle.pointer)) == 0,
              let key = publicKey else { return false }
        let result = X509_verify(handle.pointer, key) == 1
        OpenSSLErrors.clear()
        return result
    }

    /// True when `issuer`'s public key verifies this certificate's signature (names and
    /// extensions are not compared; use ``CertificateChainVerifier`` for a full check).
    package func verifySignature(issuer: Certificate) -> Bool {
        guard let key = issuer.publicKey else { return false }
        let result = X509_verify(handle.pointer, key) == 1
        OpenSSLErrors.clear()
        return result
    }

    /// True when basicConstraints says CA:TRUE.
    package var isCertificateAuthority: Bool {
        let flags = X509_get_extension_flags(handle.pointer)
        return flags & UInt32(EXFLAG_CA) != 0
    }

    /// The certificatePolicies OIDs in dotted form (empty when the extension is absent).
    package var policyOIDs: [String] {
        guard let raw = X509_get_ext_d2i(handle.pointer, NID_certificate_policies, nil, nil) else {
            OpenSSLErrors.clear()
            return []
        }
        let stack = OpaquePointer(raw)
        defer { CERTIFICATEPOLICIES_free(stack) }
        var oids: [String] = []
        for index in 0..<max(0, OPENSSL_sk_num(stack)) {
            guard let entry = OPENSSL_sk_value(stack, index)?.assumingMemoryBound(to: POLICYINFO.self),
                  let oid = entry.pointee.policyid else { continue }
            var buffer = [CChar](repeating: 0, count: 128)
            let length = Int(OBJ_obj2txt(&buffer, Int32(buffer.count), oid, 1))
            if length > 0, length < buffer.count {
                oids.append(String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return oids
    }

    /// The key usage bits, nil when the certificate has no keyUsage extension.
    package var keyUsage: KeyUsage? {
        let flags = X509_get_extension_flags(handle.pointer)
        guard flags & UInt32(EXFLAG_KUSAGE) != 0 else { return nil }
        return KeyUsage(rawValue: X509_get_key_usage(handle.pointer))
    }

    /// The subject public key as DER `SubjectPublicKeyInfo`.
    package var publicKeyDER: [UInt8] {
        guard let info = X509_get_X509_PUBKEY(handle.pointer) else { return [] }
        let length = i2d_X509_PUBKEY(info, nil)
        guard length > 0 else { OpenSSLErrors.clear(); return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509_PUBKEY(info, &cursor)
        }
        return written == length ? bytes : []
    }

    /// Algorithm and size of the subject public key; nil when OpenSSL cannot decode it.
    package var publicKeyKind: PrivateKey.Kind? {
        guard let key = publicKey else { return nil }
        return PrivateKey.kind(of: key)
    }

    /// The serial number as lower-case hex (big-endian, no leading zero bytes).
    package var serialNumberHex: String {
        guard let serial = X509_get0_serialNumber(handle.pointer),
              let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "" }
        defer { BN_free(bn) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
        return Encoding.hex(bytes)
    }

    public var description: String {
        "Certificate(CN=\(commonName ?? "-"), issuer CN=\(issuerCommonName ?? "-"), \(notBefore)…\(notAfter))"
    }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.derBytes == rhs.derBytes }
    public func hash(into hasher: inout Hasher) { hasher.combine(derBytes) }
}
