import CastCore
import CastLogging
import CastNearby
import CastTestSupport
import CastlineDaemon
import Glibc
import Synchronization
import Testing

/// NearbyJobAnnouncer over the loopback medium: a second manager on the same loopback network sees
/// what a daemon would announce.
@Suite struct NearbyJobAnnouncerTests {
    final class Seen: Sendable {
        let events = Mutex<[String]>([])
        func add(_ s: String) { events.withLock { $0.append(s) } }
        func wait(_ predicate: ([String]) -> Bool) -> Bool {
            pollUntilBlocking(timeout: 5) { events.withLock { predicate($0) } }
        }
    }

    func announcement(_ state: String, device: String = "Lobby TV") -> JobAnnouncement {
        JobAnnouncement(host: "kiosk-1", job: "lobby-dashboard", device: device, state: state, title: "Dashboard",
                        url: "http://10.0.0.5/dashboard.html")
    }

    @Test func publishesReplacesAndWithdrawsAnnouncementsAsJobStatesChange() throws {
        let folder = ScratchFolder("job-announcer")
        defer { folder.remove() }
        let (logs, sink) = try MemoryLogSink.makeSystem()
        let permissions = NearbyPermissionStore(directory: folder.path, logSystem: logs)
        let network = NearbyLoopbackNetwork()
        let daemonSide = NearbyMessagesManager(media: [NearbyLoopbackMedium(network: network, name: "kiosk-1", logSystem: logs)],
                                               permissions: permissions, logSystem: logs)
        let watcher = NearbyMessagesManager(media: [NearbyLoopbackMedium(network: network, name: "kiosk-2", logSystem: logs)],
                                            permissions: permissions, logSystem: logs)
        defer { daemonSide.close(); watcher.close() }
        // The daemon announces over mdns; this test's managers only have the loopback medium.
        let loopbackAnnouncer = NearbyJobAnnouncer(manager: daemonSide, namespace: "castline", logSystem: logs, medium: .loopback)

        // No permission: nothing is published, and the log says why (once).
        loopbackAnnouncer.update([announcement("casting")])
        loopbackAnnouncer.update([announcement("casting")])
        #expect(loopbackAnnouncer.published.isEmpty)
        #expect(logs.flush())
        let warnings = sink.records.filter { $0.className == "NearbyJobAnnouncer" && $0.level == .warning }
        #expect(warnings.count == 1 && warnings[0].message.contains("permission"))

        try permissions.grant()
        let granted = Seen()
        #expect(granted.wait { _ in daemonSide.permission.isGranted && watcher.permission.isGranted })
        let seen = Seen()
        let subscription = try watcher.subscribe(filter: NearbyMessageFilter(types: [JobAnnouncement.messageType]),
                                                 strategy: NearbyStrategy(medium: .loopback),
                                                 found: { seen.add("+" + ($0.message.text ?? "")) },
                                                 lost: { seen.add("-" + ($0.message.text ?? "")) })
        _ = subscription
        loopbackAnnouncer.update([announcement("casting")])
        #expect(seen.wait { $0.count == 1 && $0[0].hasPrefix("+") && $0[0].contains("\"state\":\"casting\"") })
        let first = try #require(seen.events.withLock { $0.first })
        let object = try JSONValue.parse(String(first.dropFirst()))
        #expect(object["job"]?.string == "lobby-dashboard" && object["device"]?.string == "Lobby TV")
        #expect(object["host"]?.string == "kiosk-1" && object["url"]?.string == "http://10.0.0.5/dashboard.html")

        loopbackAnnouncer.update([announcement("playing")])
        #expect(seen.wait { $0.count == 3 && $0[1].hasPrefix("-") && $0[2].contains("\"state\":\"playing\"") })
        loopbackAnnouncer.update([announcement("playing")])
        loopbackAnnouncer.update([])
        #expect(seen.wait { $0.count == 4 && $0[3].hasPrefix("-") && $0[3].contains("playing") })
        #expect(loopbackAnnouncer.published.isEmpty)
    }

    @Test func anAnnouncementThatWouldNotFitDropsItsURLInsteadOfBeingRefused() {
        var a = announcement("playing")
        a.url = "http://example.com/" + String(repeating: "x", count: 2000)
        let message = a.message(namespace: "castline")
        #expect(message.content.count <= NearbyMessage.maxContentBytes)
        #expect(message.text?.contains("\"url\":null") == true)
    }
}
