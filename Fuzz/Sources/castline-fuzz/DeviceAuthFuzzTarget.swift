import CastDeviceAuth
import CastProtoReference

/// The `deviceauth` target: bytes as a `DeviceAuthMessage`. The hand-written codec must accept
/// exactly what the generated SwiftProtobuf types accept, with the same message; a decoded
/// message must be written as the same bytes by both, and read back unchanged (but for the
/// challenge's values outside its enums, which are not written).
enum DeviceAuthFuzzTarget {
    static func run(_ data: UnsafeRawBufferPointer) {
        let bytes = Array(data)
        let ours = try? DeviceAuthMessage(decoding: bytes)
        let reference = try? DeviceAuthMessage(decodingWithSwiftProtobuf: bytes)
        precondition(ours == reference, "codec and SwiftProtobuf disagree: \(String(describing: ours)) vs \(String(describing: reference))")
        guard var message = ours else { return }
        message.challenge?.unknownSignatureAlgorithm = nil
        message.challenge?.unknownHashAlgorithm = nil
        let written = message.serialized()
        precondition(written == (try? message.serializedWithSwiftProtobuf()), "codec and SwiftProtobuf write \(message) differently")
        precondition((try? DeviceAuthMessage(decoding: written)) == message, "\(message) did not round-trip")
    }
}
