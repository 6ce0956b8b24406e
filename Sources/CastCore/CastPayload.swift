/// A decoded Cast message payload, dispatched on its namespace.
///
/// The four built-in namespaces decode to their message enums; every other namespace (custom app
/// channels, multizone, …) stays ``custom(_:)`` JSON. Value type, `Sendable`.
public enum CastPayload: Sendable, Hashable {
    case connection(ConnectionMessage)
    case heartbeat(HeartbeatMessage)
    case receiver(ReceiverMessage)
    case media(MediaMessage)
    case custom(JSONValue)

    /// Parses `utf8` (a `CastMessage.payload_utf8`) and decodes it for `namespace`.
    ///
    /// Pure function, thread-safe. Throws ``CastPayloadDecodingError`` wrapping the
    /// ``JSONParseError`` or ``CastPayloadError``, with the namespace in its description.
    public static func decode(namespace: CastNamespace, utf8: String) throws(CastPayloadDecodingError) -> CastPayload {
        var text = utf8
        return try text.withUTF8 { decode(namespace: namespace, buffer: $0) }.get()
    }

    /// Same as ``decode(namespace:utf8:)`` for raw UTF-8 bytes (invalid UTF-8 is a JSON error).
    public static func decode(namespace: CastNamespace, bytes: UnsafeRawBufferPointer) throws(CastPayloadDecodingError) -> CastPayload {
        try bytes.withMemoryRebound(to: UInt8.self) { decode(namespace: namespace, buffer: $0) }.get()
    }

    /// Parses, then decodes the media namespace straight from the parser's tape (no `JSONValue`
    /// tree; the same model code as ``decode(namespace:json:)``), the others from the tree.
    static func decode(namespace: CastNamespace, buffer: UnsafeBufferPointer<UInt8>) -> Result<CastPayload, CastPayloadDecodingError> {
        let isMedia = namespace == .media
        let result = JSONParser.withDocument(buffer) { (root) -> Result<CastPayload, CastPayloadError> in
            do throws(CastPayloadError) {
                if isMedia { return .success(.media(try MediaMessage(source: root))) }
                return .success(try decodeModel(namespace: namespace, json: root.jsonValue))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(.success(let payload)): return .success(payload)
        case .success(.failure(let error)): return .failure(CastPayloadDecodingError(namespace: namespace, failure: .payload(error)))
        case .failure(let error): return .failure(CastPayloadDecodingError(namespace: namespace, failure: .json(error)))
        }
    }

    /// Decodes an already parsed payload for `namespace`.
    public static func decode(namespace: CastNamespace, json: JSONValue) throws(CastPayloadDecodingError) -> CastPayload {
        do throws(CastPayloadError) {
            return try decodeModel(namespace: namespace, json: json)
        } catch {
            throw CastPayloadDecodingError(namespace: namespace, failure: .payload(error))
        }
    }

    static func decodeModel(namespace: CastNamespace, json: JSONValue) throws(CastPayloadError) -> CastPayload {
        switch namespace {
        case .media: return .media(try MediaMessage(json: json))
        case .receiver: return .receiver(try ReceiverMessage(json: json))
        case .heartbeat: return .heartbeat(try HeartbeatMessage(json: json))
        case .connection: return .connection(try ConnectionMessage(json: json))
        default: return .custom(json)
        }
    }

    /// The payload as JSON (the message enum's `json`, or the custom value).
    public var json: JSONValue {
        switch self {
        case .connection(let message): return message.json
        case .heartbeat(let message): return message.json
        case .receiver(let message): return message.json
        case .media(let message): return message.json
        case .custom(let value): return value
        }
    }

    /// The compact JSON text to put in `payload_utf8`.
    public func serialized() -> String { json.serialized() }

    /// The message `type` (for custom payloads: their `type` string member, if any).
    public var typeName: String? {
        switch self {
        case .connection(let message): return message.typeName
        case .heartbeat(let message): return message.typeName
        case .receiver(let message): return message.typeName
        case .media(let message): return message.typeName
        case .custom(let value): return value["type"]?.string
        }
    }

    /// The `requestId`, if the payload has one (custom payloads: an integer `requestId` member).
    public var requestID: RequestID? {
        switch self {
        case .connection, .heartbeat: return nil
        case .receiver(let message): return message.requestID
        case .media(let message): return message.requestID
        case .custom(let value): return value.object?.embeddedRequestID
        }
    }
}
