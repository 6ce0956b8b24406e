import CastCore
import NIOCore
import NIOEmbedded
import Testing
@testable import CastProtocol

/// The record shared by the simulator's frame log and `castline capture`.
@Suite("CastFrameRecord")
struct CastFrameRecordTests {
    static let load = CastMessage(source: "sender-0", destination: "app-1", namespace: .media,
                                  json: try! JSONValue.parse(#"{"type":"LOAD","requestId":7,"credentials":"s3cr3t","media":{"contentId":"a.mp4"}}"#))

    @Test("fields: direction, ids, namespace, type, requestId, bytes, the payload parsed with secrets redacted by default")
    func fieldsRedactByDefault() {
        let fields = CastFrameRecord.fields(of: Self.load, direction: "out")
        #expect(fields["direction"]?.string == "out" && fields["source"]?.string == "sender-0" && fields["destination"]?.string == "app-1")
        #expect(fields["namespace"]?.string == CastNamespace.media.rawValue && fields["type"]?.string == "LOAD" && fields["requestId"]?.int == 7)
        #expect(fields["payload"]?["credentials"]?.string == PayloadRedaction.placeholder)
        #expect(fields["payload"]?["media"]?["contentId"]?.string == "a.mp4")
        let kept = CastFrameRecord.fields(of: Self.load, direction: "out", redact: false)
        #expect(kept["payload"]?["credentials"]?.string == "s3cr3t")
    }

    @Test("the tap hears each message in and out, then the close, in order")
    func tapHearsEverything() throws {
        final class Heard: @unchecked Sendable { var events: [String] = [] }
        let heard = Heard()
        let channel = EmbeddedChannel(handler: CastFrameTapHandler { event in
            switch event {
            case .frame(let message, let inbound): heard.events.append("\(inbound ? "in" : "out") \(message.namespace.tail)")
            case .closed: heard.events.append("closed")
            }
        })
        try channel.writeInbound(Self.load)
        try channel.writeOutbound(Self.load)
        _ = try channel.finish()
        #expect(heard.events == ["in com.google.cast.media", "out com.google.cast.media", "closed"])
    }
}
