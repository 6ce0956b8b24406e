import CastCore
import CastLogging
import CastlineLogs
import Testing

/// A central journal-remote folder holds many sites: records know their agent (castline's
/// `agent` field, else the journal's `_HOSTNAME`), `logs stats --by agent|device` counts per
/// group, and timeline lanes are grouped per site.
@Suite struct FleetLogsTests {
    func suspend(_ device: String, host: String?, agent: String? = nil, at time: Int64) -> LogEntry {
        var a: JSONObject = ["device": .string(device), "deviceName": .string("TV \(device)"), "localSession": 1, "event": "didSuspend"]
        if let agent { a.set("agent", .string(agent)) }
        var e = LogEntry(time: time, level: .warning, className: "CastSession", body: "didSuspend(heartbeat timeout after 10.0 s)", attributes: a)
        e.host = host
        return e
    }

    @Test func theJournalsHostNameIsTheRecordsAgentUnlessCastlineNamedOne() throws {
        let line = #"{"__REALTIME_TIMESTAMP":"1795342530123456","PRIORITY":"6","MESSAGE":"m","CASTLINE_CLASS":"A","_HOSTNAME":"site-b"}"#
        let entry = try LogLineDecoder.decode(line).get()
        #expect(entry.host == "site-b" && entry.agent == "site-b" && entry.attributes["hostname"] == nil)
        #expect(suspend("d", host: "box", agent: "lobby", at: 0).agent == "lobby")
        #expect(try LogLineDecoder.decode(#"{"time":"2026-11-22T10:15:30Z","level":"info","class":"X","body":"b"}"#).get().agent == nil)
    }

    @Test func statsByAgentAndByDeviceCountEachGroupApart() {
        var byAgent = GroupedStatistics(by: .agent)
        var byDevice = GroupedStatistics(by: .device)
        let entries = [suspend("a1", host: "site1", at: 1), suspend("a1", host: "site1", at: 2), suspend("b1", host: "site2", at: 3),
                       suspend("b2", host: "site2", at: 4), suspend("b2", host: "site2", at: 5), suspend("x", host: nil, at: 6)]
        for e in entries {
            byAgent.add(e)
            byDevice.add(e)
        }
        #expect(byAgent.groups.keys.sorted() == ["-", "site1", "site2"])
        #expect(byAgent.groups["site1"]?.records == 2 && byAgent.groups["site2"]?.records == 3)
        #expect(byDevice.groups["b2"]?.records == 2 && byDevice.groups["a1"]?.records == 2)
        var read = LogReadReport()
        read.records = 6
        read.inputs = ["journal:/var/log/journal/remote"]
        let text = byAgent.text(read: read)
        #expect(text.contains("== agent site1 ==") && text.contains("== agent site2 ==") && text.contains("(3 agents)"))
        #expect(byAgent.json(read: read)["groups"]?["site2"] != nil && byAgent.json(read: read)["by"] == "agent")
    }

    @Test func timelineLanesAreGroupedPerSiteAndNamedWithIt() {
        var builder = TimelineBuilder()
        for e in [suspend("b1", host: "site2", at: 1), suspend("a1", host: "site1", at: 2), suspend("b2", host: "site2", at: 3)] {
            builder.add(e)
        }
        let lanes = builder.model(title: "t").lanes
        #expect(lanes.map(\.deviceID) == ["a1", "b1", "b2"])
        #expect(lanes.map(\.site) == ["site1", "site2", "site2"])
        // One host's logs: no grouping, no site in the lanes.
        var single = TimelineBuilder()
        single.add(suspend("a1", host: "box", at: 1))
        #expect(single.model(title: "t").lanes.map(\.site) == [nil])
    }
}
