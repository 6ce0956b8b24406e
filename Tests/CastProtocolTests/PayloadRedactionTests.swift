import CastCore
import Testing
@testable import CastProtocol

@Suite("Payload redaction: credentials never reach a log")
struct PayloadRedactionTests {
    @Test func secretsAreReplacedWhereverTheySit() throws {
        let text = #"{"type":"connect","refreshToken":"s3cr3t-token","hassUrl":"https://ha","nested":{"Password":"p","list":[{"access_token":"a"}]},"credentials":null}"#
        let redacted = PayloadRedaction.redacted(text: text)
        #expect(!redacted.contains("s3cr3t") && !redacted.contains("\"p\"") && !redacted.contains("\"a\""), "\(redacted)")
        let json = try JSONValue.parse(redacted)
        #expect(json["refreshToken"]?.string == "<redacted>")
        #expect(json["nested"]?["Password"]?.string == "<redacted>")
        #expect(json["nested"]?["list"]?.array?.first?["access_token"]?.string == "<redacted>")
        #expect(json["hassUrl"]?.string == "https://ha" && json["type"]?.string == "connect", "everything else stays")
        #expect(json["credentials"]?.isNull == true, "null is not a secret")
    }

    @Test func payloadsWithoutSecretsComeBackUntouched() {
        let text = #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://x/a.mp4"}}"#
        #expect(PayloadRedaction.redacted(text: text) == text)
        #expect(PayloadRedaction.redacted(text: "not json \"token\"") == "not json \"token\"")
    }
}
