import CastCore
import CastlineConfig
import Testing

@Suite struct ScheduleTests {
    /// 2026-03-27 12:00:00 UTC, a Friday; Paris changes to summer time on Sunday 2026-03-29 at 01:00 UTC.
    static let friday: Int64 = 1_774_612_800

    @Test func parisOffsetsFollowSummerTime() throws {
        let paris = try ZoneRules.load("Europe/Paris")
        #expect(paris.offset(at: Self.friday) == 3600)
        #expect(paris.offset(at: Self.friday + 2 * 86_400) == 7200, "Sunday noon: summer time")
        #expect(throws: ZoneRules.Failure.self) { try ZoneRules.load("Mars/Olympus") }
        #expect(throws: ZoneRules.Failure.self) { try ZoneRules.load("../etc/passwd") }
    }

    @Test func entriesAndSwitchesOnTheLocalClock() throws {
        // Weekdays 08:00-18:00, weekends 10:00-02:00 (past midnight), in Paris.
        let schedule = Schedule(entries: [
            .init(days: [1, 2, 3, 4, 5], from: 8 * 3600, to: 18 * 3600),
            .init(days: [0, 6], from: 10 * 3600, to: 2 * 3600),
        ], zone: try ZoneRules.load("Europe/Paris"))
        #expect(schedule.entry(at: Self.friday) == 0, "Friday 13:00 in Paris")
        // Friday 18:00 Paris = 17:00 UTC: the weekday entry ends.
        #expect(schedule.nextSwitch(after: Self.friday) == Self.friday + 5 * 3600)
        #expect(schedule.entry(at: Self.friday + 5 * 3600) == nil)
        // Saturday 10:00 Paris = 09:00 UTC.
        let saturday = Self.friday + 86_400 - 3 * 3600
        #expect(schedule.nextSwitch(after: Self.friday + 5 * 3600) == saturday)
        #expect(schedule.entry(at: saturday) == 1)
        // It runs past midnight: Sunday 01:30 Paris is still Saturday's entry...
        #expect(schedule.entry(at: saturday + 15 * 3600 + 1800) == 1)
        // ...and Sunday 02:00 is summer time already (the clock jumped at 02:00 to 03:00): the
        // entry ended at 01:00 UTC.
        #expect(schedule.nextSwitch(after: saturday) == Self.friday + 2 * 86_400 - 11 * 3600)
    }

    @Test func overlapsAreFoundExactly() {
        let zone = ZoneRules.utc
        #expect(Schedule(entries: [.init(days: [1], from: 0, to: 3600), .init(days: [1], from: 3600, to: 7200)], zone: zone).overlaps.isEmpty)
        #expect(Schedule(entries: [.init(days: [1], from: 0, to: 3601), .init(days: [1], from: 3600, to: 7200)], zone: zone).overlaps.count == 1)
        #expect(Schedule(entries: [.init(days: [1], from: 82_800, to: 3600), .init(days: [2], from: 1800, to: 7200)], zone: zone).overlaps.count == 1,
                "Monday's entry runs into Tuesday")
    }

    func errors(_ text: String) -> [String] {
        do { _ = try CastlineConfiguration.parse(text, file: "c.yaml"); return [] } catch { return error.diagnostics.map(\.description) }
    }

    @Test func aScheduledJobInTheConfig() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            jobs:
              - name: lobby
                devices: ["Lobby*"]
                timezone: Europe/Paris
                schedule:
                  - {days: mon-fri, from: "08:00", to: "18:00", media: http://a/day.mp4}
                  - {days: [sat, sun], from: "10:00", to: "24:00", site: https://board.example/}
                fallback: {media: http://a/night.mp4}
            """, file: "c.yaml")
        let job = config.jobs[0]
        #expect(job.schedule?.entries.map(\.days) == [[1, 2, 3, 4, 5], [0, 6]] && job.schedule?.entries[1].to == 86_400)
        #expect(job.scheduled[1].site?.url == "https://board.example/" && job.fallback?.media?.url == "http://a/night.mp4")
        let again = try JobEntry.parse(job.json.serialized(), source: "api")
        #expect(again.schedule == job.schedule && again.scheduled == job.scheduled && again.fallback == job.fallback)
    }

    @Test func badSchedulesPointAtTheirPlace() {
        let head = "jobs:\n  - name: a\n    devices: [x]\n"
        #expect(errors(head + "    timezone: Mars/Olympus\n    schedule: [{days: daily, from: \"08:00\", to: \"09:00\", media: http://a/m.mp4}]\n")
                .first?.hasPrefix("c.yaml:4:15: error: timezone: no time zone \"Mars/Olympus\"") == true)
        #expect(errors(head + "    schedule: [{days: daily, from: \"25:00\", to: \"09:00\", media: http://a/m.mp4}]\n")
                == ["c.yaml:4:36: error: jobs[0].schedule[0].from: \"25:00\" is not a time of day (00:00 to 24:00)"])
        #expect(errors(head + "    schedule:\n      - {days: mon, from: \"08:00\", to: \"10:00\", media: http://a/1.mp4}\n"
                       + "      - {days: mon-wed, from: \"09:00\", to: \"11:00\", media: http://a/2.mp4}\n")
                == ["c.yaml:6:9: error: jobs[0].schedule[1] overlaps jobs[0].schedule[0] (line 5): one entry at a time"])
        #expect(errors(head + "    schedule: [{days: funday, from: \"08:00\", to: \"09:00\", media: http://a/m.mp4}]\n")
                .first?.contains("\"funday\" is not a day") == true)
    }

    @Test func nextStartFindsTheNextTimeOnItsDaysAcrossSummerTime() throws {
        // 09:00 and 18:30 on weekdays in Paris.
        let paris = try ZoneRules.load("Europe/Paris")
        let times = Schedule(entries: [.init(days: [1, 2, 3, 4, 5], from: 9 * 3600, to: 9 * 3600 + 1),
                                       .init(days: [1, 2, 3, 4, 5], from: 18 * 3600 + 1800, to: 18 * 3600 + 1801)], zone: paris)
        // Friday 13:00 Paris → Friday 18:30 Paris = 17:30 UTC.
        #expect(times.nextStart(after: Self.friday) == Self.friday + 5 * 3600 + 1800)
        // From then, the weekend is skipped: Monday 09:00 Paris, summer time (07:00 UTC).
        let monday = Self.friday + 3 * 86_400 - 5 * 3600
        #expect(times.nextStart(after: Self.friday + 5 * 3600 + 1800) == monday)
        // The instant itself is not "after" it.
        #expect(times.nextStart(after: monday) == monday + 9 * 3600 + 1800)
        #expect(times.nextStart(after: monday - 1) == monday)
        #expect(Schedule(entries: [.init(days: [], from: 0, to: 1)], zone: paris).nextStart(after: Self.friday) == nil)
    }

    @Test func anAnnounceJobInTheConfigAndThroughTheAPI() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            jobs:
              - name: lunch-bell
                devices: ["Kitchen*", "Hall"]
                timezone: Europe/Paris
                announce:
                  media: /srv/chime.mp3
                  volume: 70
                  timeout: 30
                  at: ["12:00", "17:30:15"]
                  days: mon-fri
            """, file: "c.yaml")
        let job = try #require(config.jobs.first)
        let announcement = try #require(job.announcement)
        #expect(announcement.media == "/srv/chime.mp3" && announcement.volume == 70 && announcement.timeout == 30)
        #expect(announcement.times?.entries.map(\.from) == [12 * 3600, 17 * 3600 + 1815])
        #expect(announcement.times?.entries.allSatisfy { $0.days == [1, 2, 3, 4, 5] } == true && announcement.times?.zone.name == "Europe/Paris")
        #expect(job.media.url == "/srv/chime.mp3" && job.schedule == nil)
        let again = try JobEntry.parse(job.json.serialized(), source: "api")
        #expect(again.announcement == job.announcement && again.devices == job.devices)
        // Run on demand only: no times.
        let onDemand = try JobEntry.parse(#"{"devices": ["*"], "announce": {"media": "http://a/doorbell.mp3"}}"#, source: "api", name: "door")
        #expect(onDemand.announcement?.times == nil && onDemand.announcement?.timeout == 120)
    }

    @Test func badAnnounceJobsPointAtTheirPlace() {
        let head = "jobs:\n  - name: a\n    devices: [x]\n"
        #expect(errors(head + "    announce: {media: http://a/c.mp3, at: [\"25:00\"]}\n")
                == ["c.yaml:4:44: error: jobs[0].announce.at[0]: \"25:00\" is not a time of day (00:00 to 24:00)"])
        #expect(errors(head + "    announce: {media: http://a/c.mp3, days: mon}\n")
                == ["c.yaml:4:39: error: jobs[0].announce.days goes with at: (the times the announcement plays on those days)"])
        #expect(errors(head + "    media: http://a/m.mp4\n    announce: {media: chime.mp3}\n")
                == ["c.yaml:4:5: error: jobs[0].media: an announce job plays its announce.media (announce.at and days say when)",
                    "c.yaml:5:23: error: jobs[0].announce.media must be an http:// or https:// URL or an absolute file path, not \"chime.mp3\""])
        #expect(errors(head + "    takeover: reclaim\n    announce: {media: http://a/c.mp3, volume: 120}\n")
                == ["c.yaml:4:5: error: jobs[0].takeover: it applies to jobs that keep media playing, not to an announce job",
                    "c.yaml:5:47: error: jobs[0].announce.volume must be between 0 and 100, not 120"])
        #expect(errors(head + "    announce: {media: http://a/c.mp3, at: [\"08:00\", \"8:00\"]}\n")
                == ["c.yaml:4:53: error: jobs[0].announce.at[1] repeats an earlier time"])
    }
}
