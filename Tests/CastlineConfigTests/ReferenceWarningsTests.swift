import CastlineConfig
import Testing

/// `config check`'s warnings about what a file refers to: job globs that match no configured
/// device when discovery is limited to those devices, and job media files that cannot be read.
@Suite struct ReferenceWarningsTests {
    static let devices = """
        devices:
          - {name: Lobby TV, host: 10.0.0.5, aliases: [lobby]}
          - {name: Bar, host: 10.0.0.6, id: 0123456789abcdef0123456789abcdef}

        """

    func warnings(_ text: String, files: [String: String] = [:]) throws -> [String] {
        let (config, _) = try CastlineConfiguration.parse(text, file: "c.yaml")
        return config.referenceWarnings(localFileProblem: { path, _ in files[path] }).map(\.description)
    }

    @Test func aGlobMatchingNoConfiguredDeviceIsAWarningWhenDiscoveryUsesOnlyThoseDevices() throws {
        let jobs = """
            jobs:
              - name: kitchen
                devices: [lobby, "Kitch*", "0123456789abcdef*"]
                media: https://example.com/a.m3u8

            """
        let message = "matches no name, alias or id under devices:, and discovery finds only those devices"
        let staticOnly = try warnings(Self.devices + "discovery: {providers: [static]}\n" + jobs)
        #expect(staticOnly.count == 1, "\(staticOnly)")
        #expect(staticOnly.first?.hasPrefix(#"c.yaml:7:22: warning: jobs[0].devices[1] "Kitch*" "# + message + " (discovery.providers: [static])") == true)
        let noAutostart = try warnings(Self.devices + "discovery: {autostart: false}\n" + jobs)
        #expect(noAutostart.count == 1 && noAutostart[0].contains("(discovery.autostart: false)"))
        // With mDNS the device may appear later; with no devices: nothing to compare with.
        #expect(try warnings(Self.devices + jobs).isEmpty)
        #expect(try warnings(Self.devices + "discovery: {providers: [static, avahi-discovery]}\n" + jobs).isEmpty)
        #expect(try warnings("discovery: {autostart: false}\n" + jobs).isEmpty)
        // A single glob written as a scalar is pointed at too.
        let scalar = try warnings(Self.devices + "discovery: {autostart: false}\njobs:\n  - {name: j, devices: Den, media: https://e.com/a}\n")
        #expect(scalar.count == 1, "\(scalar)")
        #expect(scalar[0].hasPrefix(#"c.yaml:6:24: warning: jobs[0].devices[0] "Den""#))
    }

    @Test func aMissingOrUnreadableLocalFileIsAWarningAtItsURL() throws {
        let text = """
            jobs:
              - name: a
                devices: ["*"]
                media: /srv/missing.mp4
              - name: b
                devices: ["*"]
                media:
                  title: B
                  url: /srv/locked.mp4
              - name: c
                devices: ["*"]
                media: {url: https://example.com/c.mp4}

            """
        let found = try warnings(text, files: [
            "/srv/missing.mp4": "/srv/missing.mp4 does not exist", "/srv/locked.mp4": "/srv/locked.mp4 is not readable by uid 1000: Permission denied",
            "https://example.com/c.mp4": "never asked",
        ])
        #expect(found == [
            "c.yaml:4:12: warning: jobs[0].media.url: /srv/missing.mp4 does not exist: the job cannot serve it to the device",
            "c.yaml:9:12: warning: jobs[1].media.url: /srv/locked.mp4 is not readable by uid 1000: Permission denied: the job cannot serve it to the device",
        ])
    }

    @Test("an announce job's missing chime is pointed at its announce.media, not at a media.url it does not have")
    func aMissingChimeIsPointedAtAnnounceMedia() throws {
        let text = """
            jobs:
              - name: show
                devices: ["*"]
                media: https://example.com/a.mp4
              - name: chime
                devices: ["*"]
                announce:
                  volume: 40
                  media: /srv/chime.wav

            """
        #expect(try warnings(text, files: ["/srv/chime.wav": "cannot read /srv/chime.wav: No such file or directory"]) == [
            "c.yaml:9:14: warning: jobs[1].announce.media: cannot read /srv/chime.wav: No such file or directory: the job cannot serve it to the device",
        ])
    }

    @Test("a folder is handed over with the job's extensions (a folder is a playlist, not a file to read)")
    func aFolderIsCheckedWithItsExtensions() throws {
        let (config, _) = try CastlineConfiguration.parse(
            "jobs:\n  - {name: p, devices: [x], media: {url: /srv/clips, extensions: [MP4, .mov]}}\n", file: "c.yaml")
        var asked: [(String, [String]?)] = []
        #expect(config.referenceWarnings(localFileProblem: { asked.append(($0, $1)); return nil }).isEmpty)
        #expect(asked.count == 1 && asked[0].0 == "/srv/clips" && asked[0].1 == ["mp4", "mov"])
    }

    @Test func aJobMovedWithinTheFileComparesEqualItsMarksAreKeptBeside() throws {
        let job = "jobs:\n  - {name: j, devices: [x], media: /srv/a.mp4}\n"
        let (config, _) = try CastlineConfiguration.parse(job, file: "c.yaml")
        let (moved, _) = try CastlineConfiguration.parse("\n\n" + job, file: "c.yaml")
        var a = config.jobs[0]
        a.mark = moved.jobs[0].mark
        #expect(a == moved.jobs[0])
        #expect(config.jobMarks["j"] == JobSourceMarks(devices: [SourceMark(line: 2, column: 25)], url: SourceMark(line: 2, column: 36)))
        #expect(moved.jobMarks["j"]?.url == SourceMark(line: 4, column: 36))
    }
}
