@testable import CastReceiverSimServer
import Testing

/// The byte scan that decides whether a media message is parsed a second time to fetch its
/// media: every LOAD of loopback media must pass (or the device would not fetch it), others not.
@Suite("Loopback LOAD prefilter")
struct LoopbackLoadFilterTests {
    @Test("a LOAD of loopback media passes, in every host form and with escaped slashes")
    func loopbackLoadsPass() {
        for url in ["http://127.0.0.1:8000/a.mp4", #"http:\/\/127.0.0.2\/a.mp4"#, "http://localhost/a.mp4", "http://[::1]:80/a.mp4"] {
            let text = #"{"type":"LOAD","requestId":3,"media":{"contentId":"\#(url)","streamType":"BUFFERED"}}"#
            #expect(SimulatedDevice.mayBeLoopbackLoad(text), "\(url)")
        }
    }

    @Test("media elsewhere, other message types and QUEUE_LOAD are not parsed again")
    func othersDoNotPass() {
        #expect(!SimulatedDevice.mayBeLoopbackLoad(#"{"type":"LOAD","requestId":3,"media":{"contentId":"https://media.example/a.mp4"}}"#))
        #expect(!SimulatedDevice.mayBeLoopbackLoad(#"{"type":"PLAY","requestId":4,"mediaSessionId":1,"customData":"127.0.0.1"}"#))
        #expect(!SimulatedDevice.mayBeLoopbackLoad(#"{"type":"QUEUE_LOAD","requestId":5,"items":[{"media":{"contentId":"http://127.0.0.1/a.mp4"}}]}"#))
    }
}
