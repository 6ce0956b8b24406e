/// The few MQTT 3.1.1 packets `castline fleet` needs to watch a broker (CONNECT, SUBSCRIBE,
/// PUBACK, PINGREQ out; CONNACK, SUBACK, PUBLISH in), written and read by hand: the fleet view
/// only subscribes, and the host binary does not link libmosquitto (only the bridge plugin does).
/// ``MQTTPacketReader`` is pure: bytes in, whole packets out.
enum MQTTPackets {
    static func connect(clientID: String, keepalive: UInt16, username: String?, password: String?) -> [UInt8] {
        var body: [UInt8] = string("MQTT") + [4]
        var flags: UInt8 = 0x02 // clean session
        if username != nil { flags |= 0x80 }
        if password != nil { flags |= 0x40 }
        body += [flags, UInt8(keepalive >> 8), UInt8(keepalive & 0xFF)]
        body += string(clientID)
        if let username { body += string(username) }
        if let password { body += string(password) }
        return packet(0x10, body)
    }

    static func subscribe(id: UInt16, filters: [String]) -> [UInt8] {
        var body: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xFF)]
        for filter in filters { body += string(filter) + [1] }
        return packet(0x82, body)
    }

    static func puback(id: UInt16) -> [UInt8] { [0x40, 2, UInt8(id >> 8), UInt8(id & 0xFF)] }
    static let pingreq: [UInt8] = [0xC0, 0]
    static let disconnect: [UInt8] = [0xE0, 0]

    static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8.prefix(65_535))
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    static func packet(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        var out = [type]
        var length = body.count
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            out.append(byte)
        } while length > 0
        return out + body
    }
}

/// An incoming packet the fleet view cares about.
enum MQTTIncoming: Equatable {
    case connack(returnCode: UInt8)
    case suback
    case publish(topic: String, payload: [UInt8], retained: Bool, packetID: UInt16?)
    case other(type: UInt8)
}

/// Splits a byte stream into MQTT packets. A malformed length or a packet over ``maxPacket`` is
/// an error (the caller closes the connection), never an unbounded buffer.
struct MQTTPacketReader {
    static let maxPacket = 1 << 20
    private var buffer: [UInt8] = []

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    mutating func append(_ bytes: some Sequence<UInt8>) { buffer += bytes }

    /// The next whole packet, nil when more bytes are needed.
    mutating func next() throws(Malformed) -> MQTTIncoming? {
        guard buffer.count >= 2 else { return nil }
        var length = 0, multiplier = 1, index = 1
        while true {
            guard index < buffer.count else { return nil }
            let byte = buffer[index]
            length += Int(byte & 0x7F) * multiplier
            index += 1
            if byte & 0x80 == 0 { break }
            multiplier *= 128
            guard index <= 4 else { throw Malformed(description: "a packet length longer than 4 bytes") }
        }
        guard length <= Self.maxPacket else { throw Malformed(description: "a \(length)-byte packet (at most \(Self.maxPacket))") }
        guard buffer.count >= index + length else { return nil }
        let header = buffer[0]
        let body = Array(buffer[index..<(index + length)])
        buffer.removeFirst(index + length)
        switch header >> 4 {
        case 2:
            guard body.count >= 2 else { throw Malformed(description: "a short CONNACK") }
            return .connack(returnCode: body[1])
        case 9: return .suback
        case 3:
            guard body.count >= 2 else { throw Malformed(description: "a short PUBLISH") }
            let topicLength = Int(body[0]) << 8 | Int(body[1])
            let qos = (header >> 1) & 3
            let idLength = qos > 0 ? 2 : 0
            guard body.count >= 2 + topicLength + idLength else { throw Malformed(description: "a PUBLISH shorter than its topic") }
            let topic = String(decoding: body[2..<(2 + topicLength)], as: UTF8.self)
            var packetID: UInt16?
            if qos > 0 { packetID = UInt16(body[2 + topicLength]) << 8 | UInt16(body[3 + topicLength]) }
            return .publish(topic: topic, payload: Array(body[(2 + topicLength + idLength)...]), retained: header & 1 == 1, packetID: packetID)
        default:
            return .other(type: header >> 4)
        }
    }
}
