/// A nearby message: a namespace, a type and up to ``maxContentBytes`` bytes of content.
///
/// Messages are equal when all three parts are equal; a subscriber is told "found" once per
/// distinct message, however many publishers or interfaces carry it.
///
/// Limits (checked by ``validate()`` and by every publish; never truncated):
/// - content: at most ``maxContentBytes`` (1,024) bytes. The whole message travels in one DNS TXT
///   record, and that record must fit one mDNS packet on a 1,500-byte Ethernet MTU over IPv6
///   (1,452 bytes of DNS message) with the record's name and the PTR record that announces it;
///   see ``NearbyTXTRecord`` for the byte budget.
/// - namespace: 1–32 bytes, letters, digits, `.`, `_`, `-`.
/// - type: 0–32 bytes of printable ASCII without `*` (the empty type is Nearby's default type).
public struct NearbyMessage: Hashable, Sendable, CustomStringConvertible {
    package static let maxContentBytes = 1024
    package static let maxNamespaceBytes = 32
    package static let maxTypeBytes = 32
    package static let defaultNamespace = "castline"

    package var namespace: String
    package var type: String
    package var content: [UInt8]

    package init(namespace: String = NearbyMessage.defaultNamespace, type: String = "", content: [UInt8]) {
        self.namespace = namespace
        self.type = type
        self.content = content
    }

    /// A message whose content is `text` in UTF-8.
    package init(namespace: String = NearbyMessage.defaultNamespace, type: String = "", text: String) {
        self.init(namespace: namespace, type: type, content: Array(text.utf8))
    }

    /// The content as text when it is valid UTF-8.
    package var text: String? {
        var iterator = content.makeIterator()
        var output = ""
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): output.unicodeScalars.append(scalar)
            case .emptyInput: return output
            case .error: return nil
            }
        }
    }

    public var description: String {
        let body = text.map { "\"\($0.count > 40 ? String($0.prefix(40)) + "…" : $0)\"" } ?? "\(content.count) bytes"
        return "\(namespace)/\(type.isEmpty ? "(default)" : type) \(body)"
    }

    /// Throws the first limit the message breaks.
    public func validate() throws(NearbyError) {
        try Self.validate(namespace: namespace)
        try Self.validate(type: type)
        if content.count > Self.maxContentBytes {
            throw .contentTooLarge(bytes: content.count, limit: Self.maxContentBytes)
        }
    }

    package static func validate(namespace: String) throws(NearbyError) {
        let bytes = Array(namespace.utf8)
        guard !bytes.isEmpty, bytes.count <= maxNamespaceBytes else {
            throw .invalidNamespace(namespace, "must be 1-\(maxNamespaceBytes) bytes")
        }
        let allowed = bytes.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2E || b == 0x5F || b == 0x2D
        }
        guard allowed else { throw .invalidNamespace(namespace, "only letters, digits, '.', '_' and '-' are allowed") }
    }

    package static func validate(type: String) throws(NearbyError) {
        let bytes = Array(type.utf8)
        guard bytes.count <= maxTypeBytes else { throw .invalidType(type, "must be at most \(maxTypeBytes) bytes") }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x2A }) else {
            throw .invalidType(type, "only printable ASCII without '*' is allowed")
        }
    }
}
