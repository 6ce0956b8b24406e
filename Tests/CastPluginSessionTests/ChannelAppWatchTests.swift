import CastCore
import CastPluginHost
import CastPluginSession
import CastSender
import Testing

/// What a channel plugin is told about its app (ABI 1.2 `on_app_event`), from its session's updates.
@Suite struct ChannelAppWatchTests {
    static let ns = "urn:x-cast:org.castline.example.echo"

    static func app(_ id: String, session: String, namespaces: [String] = [ns], idle: Bool = false) -> ApplicationInfo {
        ApplicationInfo(
            appID: id, displayName: id, isIdleScreen: idle, namespaces: namespaces.compactMap { CastNamespace(rawValue: $0) },
            sessionID: session, transportID: "t-" + session)
    }

    static func status(_ apps: [ApplicationInfo]) -> CastSessionUpdate {
        .deviceStatus(CastDeviceStatus(ReceiverStatus(applications: apps)))
    }

    static func events(_ notices: [PluginAppNotice]) -> [PluginAppNotice.Event] { notices.map(\.event) }

    @Test("the app stops, then runs again: stopped with its ids and reason, then relaunched with the new session's")
    func stopThenRelaunch() throws {
        var watch = ChannelAppWatch(deviceID: "d1", namespaces: [Self.ns], app: Self.app("CA571E00", session: "s1"))
        let stopped = watch.apply(Self.status([Self.app("E8C28D3C", session: "idle", namespaces: [], idle: true)]))
        #expect(Self.events(stopped) == [.stopped])
        let info = try JSONValue.parse(stopped[0].info)
        #expect(info["session_id"]?.string == "s1" && info["reason"]?.string == "stopped" && info["device_id"]?.string == "d1")
        #expect(watch.app == nil)
        #expect(stopped[0].current == nil, "no app to send to after a stop")
        let back = watch.apply(Self.status([Self.app("CA571E00", session: "s2")]))
        #expect(Self.events(back) == [.relaunched])
        #expect(try JSONValue.parse(back[0].info)["transport_id"]?.string == "t-s2")
        #expect(back[0].current == "t-s2")
    }

    @Test("the same app session again is no news; a status without change tells nothing")
    func unchanged() {
        var watch = ChannelAppWatch(deviceID: "d1", namespaces: [Self.ns], app: Self.app("CA571E00", session: "s1"))
        #expect(watch.apply(Self.status([Self.app("CA571E00", session: "s1")])).isEmpty)
    }

    @Test("another app that speaks none of the channel's namespaces replaces it: stopped only, and nothing to talk to")
    func replacedByAStranger() throws {
        var watch = ChannelAppWatch(deviceID: "d1", namespaces: [Self.ns], app: Self.app("CA571E00", session: "s1"))
        let notices = watch.apply(Self.status([Self.app("CC1AD845", session: "s9", namespaces: ["urn:x-cast:com.google.cast.media"])]))
        #expect(Self.events(notices) == [.stopped])
        #expect(try JSONValue.parse(notices[0].info)["reason"]?.string == "replaced by CC1AD845")
        #expect(watch.app == nil)
    }

    @Test("a resumed link is told with the app it talks to; other session events tell nothing")
    func resumed() throws {
        var watch = ChannelAppWatch(deviceID: "d1", namespaces: [Self.ns], app: Self.app("CA571E00", session: "s1"))
        let device = CastDevice(id: "d1", friendlyName: "TV", host: "127.0.0.1", port: 8009)
        #expect(watch.apply(.event(.willResume, device: device)).isEmpty)
        let notices = watch.apply(.event(.didResume(transferred: false), device: device))
        #expect(Self.events(notices) == [.sessionResumed])
        #expect(try JSONValue.parse(notices[0].info)["session_id"]?.string == "s1")
        #expect(notices[0].current == "t-s1")
    }
}
