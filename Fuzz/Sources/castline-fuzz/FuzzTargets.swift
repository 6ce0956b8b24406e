import CastCore
import CastLogging
import CastPluginKit
import CastProtocol
import CastProtoReference
import CastlineConfig
import CastlineLogs
import CastNearby
import CastPluginHost
import NIOCore

/// The fuzz targets. Each must never crash, hang or break an invariant (a broken invariant is
/// a `precondition` failure, which libFuzzer reports as a crash with the input saved).
enum FuzzTargets {
    static let names = ["frame", "payload", "rules", "glob", "sim", "pluginjson", "config", "logline", "nearbytxt", "deviceauth", "pluginabi"]

    static func run(_ name: String, _ data: UnsafeRawBufferPointer) {
        switch name {
        case "frame": frame(data)
        case "payload": payload(data)
        case "rules": rules(data)
        case "glob": glob(data)
        case "sim": SimulatorFuzzTarget.run(data)
        case "pluginjson": pluginJSON(data)
        case "config": config(data)
        case "logline": logLine(data)
        case "nearbytxt": nearbyTXT(data)
        case "deviceauth": DeviceAuthFuzzTarget.run(data)
        // Hostile descriptors for the plugin loader and hostile arguments for every host service.
        case "pluginabi": PluginABIFuzzing.run(data)
        default: break
        }
    }

    /// Bytes as a stream, split into chunks (sizes from the first byte), through the frame decoder,
    /// the CastMessage decoder and the payload models. The fast decoder must agree with the
    /// generated SwiftProtobuf decoder, and decoded messages must re-encode to the same value, with
    /// the same bytes from the wire writer as from SwiftProtobuf.
    static func frame(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let chunk = Int(first % 17) + 1
        var machine = FrameDecodingStateMachine()
        var offset = 1
        while offset < data.count {
            let end = min(offset + chunk, data.count)
            machine.feed(ByteBuffer(bytes: data[offset..<end]))
            offset = end
            do {
                while let body = try machine.nextFrame() {
                    let fast = try? CastMessage(decoding: body)
                    let reference = try? CastMessage(decodingWithSwiftProtobuf: body)
                    precondition(fast == reference, "fast decoder and SwiftProtobuf disagree: \(String(describing: fast)) vs \(String(describing: reference))")
                    guard let message = fast else { continue }
                    let written = message.serializedBody()
                    let again = try? CastMessage(decoding: written)
                    precondition(again == message, "CastMessage re-encoding changed the message")
                    precondition(written.readableBytesView.elementsEqual(message.serializedBodyWithSwiftProtobuf().readableBytesView),
                                 "the wire writer and SwiftProtobuf encode \(message) differently")
                    if case .string(let text) = message.payload {
                        _ = try? CastPayload.decode(namespace: message.namespace, utf8: text)
                    }
                }
            } catch {
                return
            }
        }
        _ = try? machine.finish()
    }

    static let namespaces: [CastNamespace] = [.connection, .heartbeat, .receiver, .media, "urn:x-cast:com.example.custom"]

    /// Bytes as JSON: parse, re-serialize, re-parse must be equal; then every payload model.
    static func payload(_ data: UnsafeRawBufferPointer) {
        guard let value = try? JSONValue.parse(bytes: data) else { return }
        let text = value.serialized()
        let again = try? JSONValue.parse(text)
        precondition(again == value || value.containsNaN, "JSON re-serialization changed the value: \(text)")
        for ns in namespaces {
            if let payload = try? CastPayload.decode(namespace: ns, json: value) {
                let reparsed = try? CastPayload.decode(namespace: ns, utf8: payload.serialized())
                precondition(reparsed == payload, "payload model did not round-trip in \(ns): \(payload.serialized())")
            }
        }
    }

    /// Bytes as JSON a plugin receives (CastPluginKit reads it with CastJSON, as the host does):
    /// parse, serialize, parse again must be equal. The same bytes as a string through the
    /// escaper: as a JSON string literal it parses back to the same string; escaped for a console
    /// line it holds no control character.
    static func pluginJSON(_ data: UnsafeRawBufferPointer) {
        guard let text = String(validating: data, as: UTF8.self) else { return }
        let literal = JSONValue.string(text).serialized()
        precondition((try? JSONValue.parse(literal)) == .string(text), "string literal did not round-trip: \(literal)")
        var line = JSONWriter()
        data.withMemoryRebound(to: UInt8.self) { line.writeEscaped($0, quotesAndBackslashes: false) }
        precondition(!line.bytes.contains { $0 < 0x20 }, "a control character survived the console escaping")
        guard let value = try? JSONValue.parsePluginInput(text) else { return }
        let serialized = value.serialized()
        let again = try? JSONValue.parsePluginInput(serialized)
        precondition(again == value || value.containsNaN, "plugin JSON did not round-trip: \(serialized)")
    }

    /// Bytes as a rule string: parse, format, parse again must be equal.
    static func rules(_ data: UnsafeRawBufferPointer) {
        guard let text = String(validating: data, as: UTF8.self) else { return }
        guard let set = try? LogRuleParser.parse(text) else { return }
        let formatted = LogRuleParser.format(minimumLevel: set.minimumLevel, rules: set.rules)
        let again = try? LogRuleParser.parse(formatted)
        precondition(again == set, "rule string did not round-trip: \(text) → \(formatted)")
        let filter = LoggerFilter(minimumLevel: .info, rules: set.rules)
        _ = filter.level(forClass: "CastChannel.com.google.cast.tp.heartbeat", function: "send(_:)")
    }

    /// Bytes split at the first NUL: pattern and name.
    static func glob(_ data: UnsafeRawBufferPointer) {
        let split = data.firstIndex(of: 0) ?? data.count
        guard let pattern = String(validating: data[..<split], as: UTF8.self),
              let name = String(validating: data[min(split + 1, data.count)...], as: UTF8.self),
              let glob = try? GlobPattern(pattern)
        else { return }
        let matched = glob.matches(name)
        if glob.matchesEverything { precondition(matched, "'*' failed to match") }
        // Patterns are parsed by Unicode scalar and matched byte for byte: a '*' followed by a
        // combining mark is still a wildcard, and a literal matches only the same UTF-8 bytes
        // (String == would also accept canonically equivalent text).
        if !pattern.unicodeScalars.contains(where: { "*?[\\".unicodeScalars.contains($0) }) {
            precondition(matched == pattern.utf8.elementsEqual(name.utf8), "literal mismatch")
        }
    }

    /// Bytes as a YAML config file: decoding ends with a configuration or with diagnostics, each
    /// at a real position (line and column ≥ 1), never a crash or a hang.
    static func config(_ data: UnsafeRawBufferPointer) {
        let text = String(decoding: data, as: UTF8.self)
        do {
            _ = try CastlineConfiguration.parse(text, file: "fuzz.yaml")
        } catch {
            precondition(!error.diagnostics.isEmpty, "a failed config must say why")
            for d in error.diagnostics {
                precondition(d.mark.line >= 1 && d.mark.column >= 1, "diagnostic without a position: \(d)")
            }
        }
    }

    /// Bytes as the data of a DNS TXT record from the network (length-prefixed strings) through the
    /// nearby decoder: never a crash; a decoded message is valid and survives encode → decode.
    static func nearbyTXT(_ data: UnsafeRawBufferPointer) {
        var strings: [[UInt8]] = []
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            let end = min(offset + 1 + length, data.count)
            strings.append(Array(data[(offset + 1)..<end]))
            offset = end
        }
        guard let message = try? NearbyTXTRecord.decode(strings) else { return }
        do { try message.validate() } catch { preconditionFailure("decoded an invalid message: \(error)") }
        let again = NearbyTXTRecord.encode(message)
        precondition(again.allSatisfy { $0.count <= 255 }, "a TXT string over 255 bytes")
        precondition((try? NearbyTXTRecord.decode(again)) == message, "encode → decode changed the message")
    }

    /// Bytes as a log line, with a filter made from the first byte: the decoder never crashes,
    /// and the prefilter never rejects a line the full filter keeps.
    static func logLine(_ data: UnsafeRawBufferPointer) {
        guard let first = data.first else { return }
        let line = UnsafeRawBufferPointer(rebasing: data[1...])
        var filter = LogFilter()
        if first & 1 != 0 { filter.minimumLevel = .warning }
        if first & 2 != 0 { filter.classPatterns = [try! GlobPattern("Cast*")] }
        if first & 4 != 0 { filter.messageType = "LOAD" }
        if first & 8 != 0 { filter.requestID = 7 }
        if first & 16 != 0 { filter.device = "dev-1" }
        if first & 32 != 0 { filter.since = 1_000 }
        if first & 64 != 0 { filter.namespace = "media" }
        let decoded = LogLineDecoder.decode(line, origin: LogOrigin(input: "fuzz", line: 1))
        if case .success(let entry) = decoded, filter.matches(entry) {
            precondition(LinePrefilter(filter).mayMatch(line), "the prefilter rejected a matching line")
        }
    }
}

extension JSONValue {
    /// NaN never equals itself; such values are exempt from the equality invariant.
    var containsNaN: Bool {
        switch self {
        case .double(let d): return d.isNaN
        case .array(let a): return a.contains { $0.containsNaN }
        case .object(let o): return o.contains { $0.value.containsNaN }
        default: return false
        }
    }

}
