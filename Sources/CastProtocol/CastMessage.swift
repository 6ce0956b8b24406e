import CastCore
import NIOCore

/// One Cast v2 channel message: the domain form of the generated `Cast_Channel_CastMessage`.
///
/// Keeps what the wire carries, including a `protocol_version` outside the known enum (any value
/// is accepted, rust-cast's tests feed 2) and binary payloads byte for byte (device auth).
/// Value type; `Sendable`.
public struct CastMessage: Sendable, Equatable {
    /// `protocol_version` (field 1). Known values: 0 = CASTV2_1_0 … 3 = CASTV2_1_3.
    public var protocolVersion: UInt32
    /// `source_id` (field 2): `sender-0`, `receiver-0`, an app transport id.
    public var sourceID: String
    /// `destination_id` (field 3); `*` = broadcast.
    public var destinationID: String
    /// `namespace` (field 4): the multiplexing key.
    public var namespace: CastNamespace
    /// `payload_utf8` (6) or `payload_binary` (7), as announced by `payload_type` (5).
    public var payload: Payload
    /// `continued` (field 8, protocol 1.1 chunking), nil when absent.
    public var continued: Bool?
    /// `remaining_length` (field 9), nil when absent.
    public var remainingLength: UInt32?

    /// The payload and its `payload_type`.
    public enum Payload: Sendable, Equatable {
        case string(String)
        case binary([UInt8])

        /// The UTF-8 text, or nil for a binary payload.
        public var text: String? {
            if case .string(let s) = self { return s }
            return nil
        }

        /// Size on the wire in bytes.
        public var byteCount: Int {
            switch self {
            case .string(let s): return s.utf8.count
            case .binary(let b): return b.count
            }
        }
    }

    /// `CASTV2_1_0`, what senders send.
    public static let defaultProtocolVersion: UInt32 = 0

    public init(
        protocolVersion: UInt32 = CastMessage.defaultProtocolVersion, sourceID: String, destinationID: String,
        namespace: CastNamespace, payload: Payload, continued: Bool? = nil, remainingLength: UInt32? = nil
    ) {
        self.protocolVersion = protocolVersion
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.payload = payload
        self.continued = continued
        self.remainingLength = remainingLength
    }

    /// A text message carrying serialized JSON.
    public init(source: String, destination: String, namespace: CastNamespace, json: JSONValue) {
        self.init(sourceID: source, destinationID: destination, namespace: namespace, payload: .string(json.serialized()))
    }
}

/// A frame body that is not a valid `CastMessage`. The frame boundary is intact, so the
/// connection can go on; the message is dropped and reported.
public enum CastMessageDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The protobuf bytes do not parse.
    case malformedProtobuf(byteCount: Int, reason: String)
    /// A `required` field (proto2) is absent.
    case missingRequiredField(String, byteCount: Int)
    /// `payload_type` is neither STRING (0) nor BINARY (1).
    case unsupportedPayloadType(UInt64, byteCount: Int)

    public var description: String {
        switch self {
        case .malformedProtobuf(let n, let reason):
            return "frame body of \(n) bytes is not a CastMessage: \(reason)"
        case .missingRequiredField(let field, let n):
            return "CastMessage of \(n) bytes lacks required field '\(field)'"
        case .unsupportedPayloadType(let raw, let n):
            return "CastMessage of \(n) bytes has unsupported payload_type \(raw) (expected 0 STRING or 1 BINARY)"
        }
    }
}
