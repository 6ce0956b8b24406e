import NIOCore

/// Decodes the frame bodies of one connection into ``CastMessage``s.
///
/// Every message on a connection names the same few endpoints (the app's transport id, the
/// sender's id), so a `source_id` / `destination_id` whose bytes equal the previous message's is
/// that message's string again: one compare instead of a validation, an allocation, a copy and
/// later a free. Otherwise exactly ``CastMessage/init(decoding:)``. A value type with state: one per
/// connection, used on its event loop (``CastMessageCodec`` holds one).
public struct CastMessageDecoder: Sendable {
    private var lastSource: String?
    private var lastDestination: String?

    public init() {}

    /// The message in `body`; errors as ``CastMessage/init(decoding:)``.
    public mutating func decode(_ body: ByteBuffer) throws(CastMessageDecodingError) -> CastMessage {
        let message = try CastMessage(decoding: body, reusableSource: lastSource, reusableDestination: lastDestination)
        lastSource = message.sourceID
        lastDestination = message.destinationID
        return message
    }
}
