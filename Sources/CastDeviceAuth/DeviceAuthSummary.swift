import CastProtocol
import SwiftProtobuf

/// One word for a binary device-auth payload, for logs: `challenge`, `response`, `error` or `invalid`.
public enum DeviceAuthSummary {
    public static func describe(_ bytes: [UInt8]) -> String {
        guard let message = try? Cast_Channel_DeviceAuthMessage(serializedBytes: bytes) else { return "invalid" }
        if message.hasChallenge { return "challenge" }
        if message.hasResponse { return "response" }
        if message.hasError { return "error" }
        return "empty"
    }
}
