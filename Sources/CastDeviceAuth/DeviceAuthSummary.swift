/// One word for a binary device-auth payload, for logs: `challenge`, `response`, `error`, `empty`
/// or `invalid`.
public enum DeviceAuthSummary {
    public static func describe(_ bytes: [UInt8]) -> String {
        guard let message = try? DeviceAuthMessage(decoding: bytes) else { return "invalid" }
        if message.challenge != nil { return "challenge" }
        if message.response != nil { return "response" }
        if message.error != nil { return "error" }
        return "empty"
    }
}
