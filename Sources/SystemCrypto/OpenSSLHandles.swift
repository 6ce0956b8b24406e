internal import COpenSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `EVP_PKEY` (freed on deinit). Immutable after creation: OpenSSL 3 allows
/// concurrent signing and verification with one key from several threads.
final class KeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The public half as DER `SubjectPublicKeyInfo`, encoded once: OpenSSL 3.0's encoder
    /// (`i2d_PUBKEY`, `X509_set_pubkey`) costs 70–220 µs per call, more than an ECDSA signature.
    let publicKeyInfo: [UInt8]

    /// The parts of ``publicKeyInfo`` a certificate needs (see `CertificateBuilder`), or nil
    /// when the key's algorithm parameters are neither absent, NULL nor a named curve.
    let publicKeyParts: PublicKeyParts?

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
        if let point = KeyHandle.p256PublicPoint(pointer) {
            publicKeyInfo = KeyHandle.p256InfoPrefix + point
            publicKeyParts = PublicKeyParts(algorithm: NID_X9_62_id_ecPublicKey, curve: NID_X9_62_prime256v1, bits: point)
        } else {
            publicKeyInfo = KeyHandle.encodedPublicKeyInfo(pointer)
            publicKeyParts = PublicKeyParts(parsing: publicKeyInfo)
        }
    }

    deinit { EVP_PKEY_free(pointer) }

    /// DER prefix of a P-256 `SubjectPublicKeyInfo` (id-ecPublicKey, prime256v1, BIT STRING of 66 bytes).
    static let p256InfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The uncompressed public point (65 bytes, `04 || X || Y`) of a P-256 key, else nil.
    static func p256PublicPoint(_ key: OpaquePointer) -> [UInt8]? {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, case .p256 = PrivateKey.kind(of: key) else { return nil }
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        let ok = point.withUnsafeMutableBufferPointer {
            EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", $0.baseAddress, $0.count, &length)
        }
        guard ok == 1, length == 65, point[0] == 0x04 else { OpenSSLErrors.clear(); return nil }
        return point
    }

    private static func encodedPublicKeyInfo(_ key: OpaquePointer) -> [UInt8] {
        let length = i2d_PUBKEY(key, nil)
        guard length > 0 else { OpenSSLErrors.clear(); return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(key, &cursor)
        }
        return written == length ? bytes : []
    }
}

/// Owns one `X509` (freed on deinit). Never mutated after it was built or parsed; OpenSSL
/// caches extension data under its own lock, so reads from several threads are safe.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }
}

/// A `SubjectPublicKeyInfo` taken apart: algorithm, parameter type (`V_ASN1_UNDEF`,
/// `V_ASN1_NULL` or `V_ASN1_OBJECT`), named-curve parameter and the key bits.
struct PublicKeyParts: Sendable {
    let algorithm: Int32
    let parameterType: Int32
    let curve: Int32?
    let bits: [UInt8]

    init(algorithm: Int32, curve: Int32, bits: [UInt8]) {
        self.algorithm = algorithm
        parameterType = V_ASN1_OBJECT
        self.curve = curve
        self.bits = bits
    }

    /// Parses DER (`d2i_X509_PUBKEY` runs the OpenSSL 3.0 decoder: ~140 µs, so once per key).
    init?(parsing info: [UInt8]) {
        let parsed: OpaquePointer? = info.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else { OpenSSLErrors.clear(); return nil }
        defer { X509_PUBKEY_free(parsed) }
        var bits: UnsafePointer<UInt8>?
        var count: Int32 = 0
        var algorithm: UnsafeMutablePointer<X509_ALGOR>?
        var object: OpaquePointer?
        var parameterType: Int32 = 0
        var parameter: UnsafeRawPointer?
        guard X509_PUBKEY_get0_param(nil, &bits, &count, &algorithm, parsed) == 1, let bits, count > 0,
              let algorithm else { OpenSSLErrors.clear(); return nil }
        X509_ALGOR_get0(&object, &parameterType, &parameter, algorithm)
        let nid = OBJ_obj2nid(object)
        guard nid != NID_undef else { return nil }
        switch parameterType {
        case V_ASN1_UNDEF, V_ASN1_NULL: curve = nil
        case V_ASN1_OBJECT:
            guard let parameter else { return nil }
            let curveNID = OBJ_obj2nid(OpaquePointer(parameter))
            guard curveNID != NID_undef else { return nil }
            curve = curveNID
        default: return nil
        }
        self.algorithm = nid
        self.parameterType = parameterType
        self.bits = Array(UnsafeBufferPointer(start: bits, count: Int(count)))
    }
}

/// Memory BIOs in and out of OpenSSL's PEM and DER routines.
enum MemoryBIO {
    /// Runs `body` with a read-only BIO over `bytes`; nil when the BIO cannot be made.
    static func reading<T>(_ bytes: [UInt8], _ body: (OpaquePointer) -> T?) -> T? {
        bytes.withUnsafeBytes { raw -> T? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(clamping: raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    /// Runs `write` on an empty memory BIO and returns what it wrote, or nil when `write`
    /// returned false (or the BIO cannot be made).
    static func writing(_ write: (OpaquePointer) -> Bool) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) else { return nil }
        var data: UnsafeMutablePointer<CChar>?
        let length = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }
}

/// Small conversions shared by the types of this module.
enum Encoding {
    /// DER of `X509` via `i2d_X509`; nil when OpenSSL cannot encode it.
    static func der(of x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? bytes : nil
    }

    /// PEM text: `-----BEGIN label-----`, base64 in 64-column lines, `-----END label-----`.
    static func pem(label: String, der: [UInt8]) -> String {
        var text = "-----BEGIN \(label)-----\n"
        var offset = 0
        while offset < der.count {
            let chunk = Array(der[offset..<min(offset + 48, der.count)])
            var out = [UInt8](repeating: 0, count: 65 + 1)
            let n = out.withUnsafeMutableBufferPointer { o in
                chunk.withUnsafeBufferPointer { EVP_EncodeBlock(o.baseAddress, $0.baseAddress, Int32($0.count)) }
            }
            text += String(decoding: out[0..<Int(max(0, n))], as: UTF8.self) + "\n"
            offset += 48
        }
        return text + "-----END \(label)-----\n"
    }

    /// Lower-case hexadecimal.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Wall-clock time in whole seconds since 1970-01-01 UTC, the unit of every time in this module.
public enum UnixTime {
    /// The current wall-clock time.
    public static var now: Int64 { Int64(time(nil)) }
    /// Seconds in one hour.
    package static let hour: Int64 = 3600
    /// Seconds in one day.
    package static let day: Int64 = 86_400
}
