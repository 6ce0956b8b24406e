/// A nearby message as the strings of one DNS TXT record (RFC 6763 key=value strings, each at
/// most 255 bytes), and back.
///
/// Layout, in this order: `cn=1` (format version), `ns=<namespace>`, `ty=<type>`, `n=<content
/// length>`, then the content in chunks `d0=`, `d1=`, … of at most ``chunkBytes`` raw bytes each.
/// The decoder checks the version, every key, the chunk order and that the chunks add up to `n`:
/// a record that does not is refused with the reason, never half-read.
///
/// Byte budget at the limits (content 1,024 bytes, namespace and type 32 bytes): TXT data 1,130
/// bytes; with the record's owner name (≤ 94 bytes), its 10-byte header and the 12-byte DNS header:
/// 1,246 bytes, under the 1,452 bytes an IPv6 packet on a 1,500-byte MTU carries, leaving room for
/// the PTR record that announces it.
public enum NearbyTXTRecord {
    package static let version = "1"
    package static let chunkBytes = 250

    /// The TXT strings for `message` (which must be valid: see ``NearbyMessage/validate()``).
    public static func encode(_ message: NearbyMessage) -> [[UInt8]] {
        var strings: [[UInt8]] = [
            Array("cn=\(version)".utf8), Array("ns=\(message.namespace)".utf8), Array("ty=\(message.type)".utf8),
            Array("n=\(message.content.count)".utf8),
        ]
        var index = 0
        var offset = 0
        while offset < message.content.count {
            let end = min(offset + chunkBytes, message.content.count)
            strings.append(Array("d\(index)=".utf8) + message.content[offset..<end])
            offset = end
            index += 1
        }
        return strings
    }

    /// The total size of the TXT record data (each string with its length byte).
    package static func wireSize(_ strings: [[UInt8]]) -> Int { strings.reduce(0) { $0 + 1 + $1.count } }

    /// Why a TXT record is not a nearby message.
    public struct DecodingError: Error, Equatable, CustomStringConvertible {
        package var reason: String
        public var description: String { reason }
    }

    /// The message in `strings`, or why there is none.
    public static func decode(_ strings: [[UInt8]]) throws(DecodingError) -> NearbyMessage {
        var values: [String: [UInt8]] = [:]
        var chunks: [Int: [UInt8]] = [:]
        for string in strings {
            guard string.count <= 255 else { throw DecodingError(reason: "a TXT string is longer than 255 bytes") }
            guard let equals = string.firstIndex(of: 0x3D), equals > 0 else {
                throw DecodingError(reason: "a TXT string has no key=value form")
            }
            let key = String(decoding: string[..<equals], as: UTF8.self)
            let value = Array(string[(equals + 1)...])
            if key.first == "d", let index = Int(key.dropFirst()), String(index) == key.dropFirst() {
                guard index >= 0, index < 64, chunks[index] == nil else { throw DecodingError(reason: "content chunk \(key) repeated or out of range") }
                chunks[index] = value
                continue
            }
            guard values[key] == nil else { throw DecodingError(reason: "key \(key) repeated") }
            values[key] = value
        }
        guard let version = values["cn"] else { throw DecodingError(reason: "no cn= (not a castline nearby record)") }
        guard version == Array(Self.version.utf8) else {
            throw DecodingError(reason: "format version \(String(decoding: version, as: UTF8.self)) (this castline reads \(Self.version))")
        }
        guard let ns = values["ns"], let type = values["ty"], let lengthText = values["n"] else {
            throw DecodingError(reason: "ns=, ty= or n= missing")
        }
        guard let length = Int(String(decoding: lengthText, as: UTF8.self)), length >= 0, length <= NearbyMessage.maxContentBytes else {
            throw DecodingError(reason: "n= is not a length of 0-\(NearbyMessage.maxContentBytes) bytes")
        }
        var content: [UInt8] = []
        content.reserveCapacity(length)
        for index in 0..<chunks.count {
            guard let chunk = chunks[index] else { throw DecodingError(reason: "content chunk d\(index) missing") }
            content += chunk
        }
        guard content.count == length else {
            throw DecodingError(reason: "the content chunks hold \(content.count) bytes, n= says \(length)")
        }
        let message = NearbyMessage(namespace: String(decoding: ns, as: UTF8.self), type: String(decoding: type, as: UTF8.self),
                                    content: content)
        do { try message.validate() } catch { throw DecodingError(reason: error.description) }
        return message
    }
}
