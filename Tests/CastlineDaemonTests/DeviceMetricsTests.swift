import CastCore
import CastlineDaemon
import Testing

/// The per-device figures of /metrics, fed with hub events as the daemon feeds them.
@Suite struct DeviceMetricsTests {
    @Test func reconnectsLaunchesByReasonAndLastSeen() {
        let m = DeviceMetrics()
        m.note(kind: .session, type: "didStart", device: "tv", fields: [:], time: 100)
        m.note(kind: .session, type: "didSuspend", device: "tv", fields: [:], time: 110)
        #expect(m.counts("tv").lastSeen == 100)   // a suspend is not a sign of life
        m.note(kind: .session, type: "didResume", device: "tv", fields: [:], time: 120)
        m.note(kind: .session, type: "didResume", device: "tv", fields: [:], time: 130)
        m.note(kind: .job, type: "cast", device: "tv", fields: ["cause": "first"], time: 131)
        m.note(kind: .job, type: "cast", device: "tv", fields: ["cause": "app-closed"], time: 140)
        m.note(kind: .job, type: "cast", device: "tv", fields: ["cause": "app-closed"], time: 150)
        m.note(kind: .job, type: "playing", device: "tv", fields: ["input": "media"], time: 151)
        m.note(kind: .device, type: "lost", device: "tv", fields: [:], time: 160)
        m.note(kind: .media, type: "PLAYING", device: "other", fields: [:], time: 170)
        m.note(kind: .job, type: "added", device: nil, fields: [:], time: 171)
        let tv = m.counts("tv")
        #expect(tv.reconnects == 2)
        #expect(tv.launches == ["first": 1, "app-closed": 2])
        #expect(tv.lastSeen == 130)
        #expect(m.counts("other").lastSeen == 170 && m.counts("other").reconnects == 0)
        m.seen("tv", at: 200)
        #expect(m.counts("tv").lastSeen == 200)
        #expect(m.counts("never").lastSeen == nil)
    }

    @Test func ownerKindsAreTheScreenOwnersKinds() {
        #expect(DeviceMetrics.ownerKinds == ["job", "command", "announcement", "other", "nobody", "unknown"])
        #expect(Set(DeviceMetrics.mediaStates).isSuperset(of: ["PAGE", "UNKNOWN", "PLAYING", "NO_APP"]))
    }
}
