/// The simulator's own device-auth PKI: a root CA ("castline simulator root CA"), an
/// intermediate ("castline simulator device ICA") that issues the per-device certificates, and
/// the RSA-2048 *model key* every simulated device signs challenges with.
///
/// Real Cast devices chain to Google's "Cast Root CA" and each holds its own provisioned key;
/// the simulator cannot, so a sender that should accept it must trust ``rootCertificatePEM``.
/// Sharing one model key keeps creating 1,000 devices fast (RSA-2048 generation costs tens of
/// milliseconds, issuing a certificate well under one); each device still gets its own certificate.
///
/// All keys are RSA-2048, certificates SHA-256, valid for ten years from one day before creation.
/// Files written by ``save(to:)``: see ``FileName``; keys are mode 0600.
public struct SimulatorAuthority: Sendable {
    /// Common name of the root CA.
    package static let rootCommonName = "castline simulator root CA"
    /// Common name of the intermediate CA that issues device certificates.
    package static let intermediateCommonName = "castline simulator device ICA"
    /// Organisation of both CA certificates.
    package static let organization = "castline"
    /// How long the CA certificates are valid (10 years of 365 days).
    package static let validity: Int64 = 10 * 365 * UnixTime.day

    /// The files of a saved authority.
    package enum FileName {
        package static let rootCertificate = "root-ca.pem"
        package static let rootKey = "root-ca-key.pem"
        package static let intermediateCertificate = "device-ica.pem"
        package static let intermediateKey = "device-ica-key.pem"
        /// Optional on load: generated (and written) when missing.
        package static let deviceModelKey = "device-model-key.pem"
    }

    /// The trust anchor of every device-auth chain the simulator produces.
    public let rootCertificate: Certificate
    /// The intermediate sent in `AuthResponse.intermediate_certificate`.
    package let intermediateCertificate: Certificate
    /// The key every simulated device signs device-auth challenges with (RSA-2048).
    package let deviceModelKey: PrivateKey
    let rootKey: PrivateKey
    let intermediateKey: PrivateKey

    /// The root certificate as PEM: export it as the trust anchor for device auth.
    package var rootCertificatePEM: String { rootCertificate.pem }

    /// A fresh authority (three RSA-2048 keys: about a quarter of a second).
    public static func generate(now: Int64 = UnixTime.now) throws(CryptoError) -> SimulatorAuthority {
        let start = now - UnixTime.day
        let rootKey = try PrivateKey.generateRSA(bits: 2048)
        let root = try makeCA(rootCommonName, key: rootKey, start: start, pathLength: 1, issuer: nil)
        let icaKey = try PrivateKey.generateRSA(bits: 2048)
        let ica = try makeCA(intermediateCommonName, key: icaKey, start: start, pathLength: 0, issuer: (root, rootKey))
        return SimulatorAuthority(rootCertificate: root, intermediateCertificate: ica,
                                  deviceModelKey: try PrivateKey.generateRSA(bits: 2048),
                                  rootKey: rootKey, intermediateKey: icaKey)
    }

    private static func makeCA(_ name: String, key: PrivateKey, start: Int64, pathLength: Int,
                               issuer: (Certificate, PrivateKey)?) throws(CryptoError) -> Certificate {
        var builder = CertificateBuilder(commonName: name, notBefore: start, notAfter: start + validity)
        builder.organization = organization
        builder.isCertificateAuthority = true
        builder.pathLength = pathLength
        builder.keyUsage = [.keyCertSign, .cRLSign]
        guard let issuer else { return try builder.selfSigned(key: key) }
        return try builder.issued(subjectKey: key, issuer: issuer.0, issuerKey: issuer.1)
    }

    /// Writes the authority into `directory` (created with mode 0700 when missing; its parent
    /// must exist). Certificates are 0644, keys 0600; each file is replaced atomically.
    package func save(to directory: String) throws(CryptoError) {
        try AuthorityFiles.makeDirectory(directory)
        let path = { (name: String) in AuthorityFiles.join(directory, name) }
        try AuthorityFiles.writeText(path(FileName.rootCertificate), rootCertificate.pem, mode: 0o644)
        try AuthorityFiles.writeText(path(FileName.rootKey), try rootKey.pkcs8PEM(), mode: 0o600)
        try AuthorityFiles.writeText(path(FileName.intermediateCertificate), intermediateCertificate.pem, mode: 0o644)
        try AuthorityFiles.writeText(path(FileName.intermediateKey), try intermediateKey.pkcs8PEM(), mode: 0o600)
        try AuthorityFiles.writeText(path(FileName.deviceModelKey), try deviceModelKey.pkcs8PEM(), mode: 0o600)
    }

    /// Reads an authority saved by ``save(to:)`` and checks that it is consistent (keys match
    /// certificates, the intermediate is signed by the root) and valid at `now`. A missing
    /// device model key is generated and written.
    package static func load(from directory: String, now: Int64 = UnixTime.now) throws(CryptoError) -> SimulatorAuthority {
        let path = { (name: String) in AuthorityFiles.join(directory, name) }
        let root = try Certificate(pem: try AuthorityFiles.readText(path(FileName.rootCertificate)))
        let rootKey = try PrivateKey(pem: try AuthorityFiles.readText(path(FileName.rootKey)))
        let ica = try Certificate(pem: try AuthorityFiles.readText(path(FileName.intermediateCertificate)))
        let icaKey = try PrivateKey(pem: try AuthorityFiles.readText(path(FileName.intermediateKey)))
        let modelKey: PrivateKey
        if AuthorityFiles.exists(path(FileName.deviceModelKey)) {
            modelKey = try PrivateKey(pem: try AuthorityFiles.readText(path(FileName.deviceModelKey)))
        } else {
            modelKey = try PrivateKey.generateRSA(bits: 2048)
            try AuthorityFiles.writeText(path(FileName.deviceModelKey), try modelKey.pkcs8PEM(), mode: 0o600)
        }
        let problem = consistencyProblem(root: root, rootKey: rootKey, ica: ica, icaKey: icaKey, modelKey: modelKey, now: now)
        if let problem { throw .file(path: directory, reason: problem + " (remove the folder to create a new authority)") }
        return SimulatorAuthority(rootCertificate: root, intermediateCertificate: ica, deviceModelKey: modelKey,
                                  rootKey: rootKey, intermediateKey: icaKey)
    }

    private static func consistencyProblem(root: Certificate, rootKey: PrivateKey, ica: Certificate, icaKey: PrivateKey,
                                           modelKey: PrivateKey, now: Int64) -> String? {
        if !rootKey.matches(root) { return "\(FileName.rootKey) does not belong to \(FileName.rootCertificate)" }
        if !icaKey.matches(ica) { return "\(FileName.intermediateKey) does not belong to \(FileName.intermediateCertificate)" }
        if !root.isSelfSigned || !root.isCertificateAuthority { return "\(FileName.rootCertificate) is not a self-signed CA" }
        if !ica.isCertificateAuthority || !ica.verifySignature(issuer: root) {
            return "\(FileName.intermediateCertificate) is not a CA signed by \(FileName.rootCertificate)"
        }
        guard case .rsa = modelKey.kind else { return "\(FileName.deviceModelKey) is \(modelKey.kind), not RSA" }
        for certificate in [root, ica] where !certificate.isValid(at: now) {
            return "\(certificate.commonName ?? "a CA certificate") is valid only \(certificate.notBefore)…\(certificate.notAfter), not at \(now)"
        }
        return nil
    }

    /// Loads the authority from `directory`, or creates and saves a new one when the folder
    /// does not exist or holds none of the authority's files. A folder with only some of them
    /// is an error (nothing is overwritten).
    package static func loadOrCreate(directory: String, now: Int64 = UnixTime.now) throws(CryptoError) -> SimulatorAuthority {
        let required = [FileName.rootCertificate, FileName.rootKey, FileName.intermediateCertificate, FileName.intermediateKey]
        let present = required.filter { AuthorityFiles.exists(AuthorityFiles.join(directory, $0)) }
        if present.count == required.count { return try load(from: directory, now: now) }
        if !present.isEmpty {
            let missing = required.filter { !present.contains($0) }
            throw .file(path: directory, reason: "incomplete simulator authority: missing \(missing.joined(separator: ", "))")
        }
        let authority = try generate(now: now)
        try authority.save(to: directory)
        return authority
    }
}
