import CastCore
import CastlineConfig
import Foundation
import Testing

@Suite struct CastlineConfigurationTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func errors(_ text: String) -> [String] {
        do {
            _ = try CastlineConfiguration.parse(text, file: "c.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func theExampleFileDecodesToWhatItSays() throws {
        let path = Self.repo.appendingPathComponent("configs/castline.example.yaml").path
        let (config, warnings) = try CastlineConfiguration.load(path: path)
        #expect(warnings.isEmpty)
        #expect(config.receiverAppID == "CC1AD845")
        #expect(config.devices.map(\.name) == ["Lobby TV", "Lobby Wall"])
        #expect(config.devices[0].aliases == ["lobby"] && config.devices[1].port == 8009)
        #expect(config.logging.rules == "info,CastChannel.*heartbeat:none,*Session:debug")
        #expect(config.logging.sinks.map(\.type) == ["json", "journald"])
        #expect(config.logging.sinks[0].options == #"{"path":"/var/log/castline/castline.jsonl"}"#)
        #expect(config.plugins.disabled == ["echo-channel-c"])
        #expect(config.plugins.configs["avahi-discovery"] == "{}")
        #expect(config.session.deviceAuth == .off && config.session.reconnectMaxAttempts == nil)
        #expect(config.daemon.onStop == .leave)
        #expect(config.nearby.stateDir == nil && config.nearby.interfaces.isEmpty && !config.nearby.announceJobs)
        #expect(config.nearby.namespace == "castline")
        let job = try #require(config.jobs.first)
        #expect(job.name == "lobby-dashboard" && job.devices == ["Lobby*"])
        #expect(job.media.streamType == .live && job.media.contentType == "application/x-mpegURL")
        #expect(job.recastOn == [.idle, .reboot, .found] && job.takeover == .yield && job.reclaimAfter == 600)
    }

    @Test func theNearbySectionIsCheckedAtEachValue() throws {
        let (config, _) = try CastlineConfiguration.parse(
            "nearby:\n  state_dir: /var/lib/castline\n  interfaces: [eth1]\n  announce_jobs: true\n  namespace: lobby.kiosks\n", file: "c.yaml")
        #expect(config.nearby.stateDir == "/var/lib/castline" && config.nearby.interfaces == ["eth1"])
        #expect(config.nearby.announceJobs && config.nearby.namespace == "lobby.kiosks")
        #expect(errors("nearby:\n  state_dir: relative/dir\n  namespace: \"a b\"\n  announce_job: true\n") == [
            "c.yaml:4:3: error: unknown key \"announce_job\" in nearby (did you mean \"announce_jobs\"?); allowed: state_dir, interfaces, announce_jobs, namespace",
            "c.yaml:2:14: error: nearby.state_dir must be an absolute path, not \"relative/dir\"",
            "c.yaml:3:14: error: nearby.namespace must be 1-32 letters, digits, '.', '_' or '-', not \"a b\"",
        ])
    }

    @Test func theMediaSectionAllowsHardwareEncodingOnRequest() throws {
        #expect(try CastlineConfiguration.parse("", file: "c.yaml").0.media.hardwareEncoding == .off)
        let (config, _) = try CastlineConfiguration.parse("media:\n  hardware_encoding: vaapi\n  vaapi_device: /dev/dri/renderD129\n", file: "c.yaml")
        #expect(config.media.hardwareEncoding == .vaapi && config.media.vaapiDevice == "/dev/dri/renderD129")
        let problems = errors("media:\n  hardware_encoding: nvenc\n  vaapi_device: renderD128\n")
        #expect(problems.count == 2 && problems[0].contains("hardware_encoding") && problems[1].contains("must be a device node under /dev"), "\(problems)")
    }

    @Test func mediaRootsAndPortAreCheckedAtEachValue() throws {
        let (config, _) = try CastlineConfiguration.parse("media:\n  roots: [/srv/signage, /home/shared]\n  port: 8100-8119\n", file: "c.yaml")
        #expect(config.media.roots == ["/srv/signage", "/home/shared"] && config.media.ports == 8100...8119)
        #expect(try CastlineConfiguration.parse("media: {port: 8100}", file: "c.yaml").0.media.ports == 8100...8100)
        #expect(try CastlineConfiguration.parse("", file: "c.yaml").0.media.ports == 0...0)
        #expect(errors("media:\n  roots: [srv]\n  port: 8119-8100\n") == [
            "c.yaml:2:10: error: media.roots must list absolute folders, not \"srv\"",
            "c.yaml:3:9: error: media.port must be a port (8100), a range of ports (8100-8119) between 1 and 65535, or 0 (any), not \"8119-8100\"",
        ])
    }

    @Test func pluginsInProcessAndLimitsAreCheckedAtEachValue() throws {
        let (config, _) = try CastlineConfiguration.parse(
            "plugins:\n  in_process: [acme-avahi]\n  limits: {memory_mb: 64, cpu_seconds: 5, open_files: 100}\n", file: "c.yaml")
        #expect(config.plugins.inProcess == ["acme-avahi"])
        #expect(config.plugins.limits == { var l = PluginLimits(); l.memoryMB = 64; l.cpuSeconds = 5; l.openFiles = 100; return l }())
        #expect(try CastlineConfiguration.parse("", file: "c.yaml").0.plugins.limits == PluginLimits())
        let problems = errors("plugins:\n  isolated: [x]\n  in_process: [x]\n  limits: {memory_mb: 1, ram: 3}\n")
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.contains { $0.contains("in both plugins.isolated and plugins.in_process") }, "\(problems)")
        #expect(problems.contains { $0.contains("unknown key \"ram\" in plugins.limits") }, "\(problems)")
        #expect(problems.contains { $0.contains("plugins.limits.memory_mb must be between 16") }, "\(problems)")
    }

    @Test func aSiteJobTakesAPageAndItsKeepAliveSettings() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            jobs:
              - name: board
                devices: ["Lobby*"]
                site: {url: "https://board.example/", force: true, reload_every: 60, idle_timeout: 30}
              - name: short
                devices: ["Hall"]
                site: http://10.0.0.5/board
            """, file: "c.yaml")
        let site = try #require(config.jobs[0].site)
        #expect(site.url == "https://board.example/" && site.force == true && site.reloadEvery == 60 && site.idleTimeout == 30)
        #expect(SiteEntry.keepAliveInterval(idleTimeout: 30) == 20 && SiteEntry.keepAliveInterval(idleTimeout: 600) == 540)
        #expect(config.jobs[0].media.contentType == "text/html")
        #expect(config.jobs[1].site?.idleTimeout == nil, "nil: by the device's model, else the default")
        #expect(config.jobs[0].json["site"]?["idle_timeout"] == .double(30) && config.jobs[0].json["media"] == nil)
        let again = try JobEntry.parse(config.jobs[0].json.serialized(), source: "api")
        #expect(again.site == site, "a site job survives the jobs file")
    }

    @Test func idleTimeoutsByModelKeepTheirOrderAndAreChecked() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            daemon:
              idle_timeouts: {"Google Nest Hub*": 30, "*": 900}
            """, file: "c.yaml")
        #expect(config.daemon.idleTimeouts.map(\.model) == ["Google Nest Hub*", "*"])
        #expect(config.daemon.idleTimeouts.map(\.seconds) == [30, 900])
        #expect(errors("daemon: {idle_timeouts: {Hub: 5}}\n") == ["c.yaml:1:31: error: daemon.idle_timeouts.Hub must be between 10 and 86400 seconds, not 5"])
    }

    @Test func playlistsAreListsFoldersOrM3UFilesWithARepeatMode() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            jobs:
              - {name: a, devices: [x], media: [http://a/1.mp4, /srv/2.mp4]}
              - {name: b, devices: [x], media: {url: /srv/loop/, extensions: [.MP4, mov], repeat: off}}
              - {name: c, devices: [x], media: {items: [http://a/1.mp3], repeat: shuffle}}
              - {name: d, devices: [x], media: http://a/one.mp4}
            """, file: "c.yaml")
        #expect(config.jobs[0].media.items == ["http://a/1.mp4", "/srv/2.mp4"] && config.jobs[0].media.isPlaylist)
        #expect(config.jobs[1].media.extensions == ["mp4", "mov"] && config.jobs[1].media.repeatMode == .off && config.jobs[1].media.isPlaylist)
        #expect(config.jobs[2].media.repeatMode == .shuffle && !config.jobs[3].media.isPlaylist)
        let again = try JobEntry.parse(config.jobs[0].json.serialized(), source: "api")
        #expect(again.media.items == config.jobs[0].media.items)
        #expect(errors("jobs:\n  - {name: a, devices: [x], media: []}\n") == ["c.yaml:2:36: error: jobs[0].media is an empty list: a playlist needs at least one item"])
        #expect(errors("jobs:\n  - {name: a, devices: [x], media: [ftp://x]}\n").first?.contains("jobs[0].media[0] must be an http:// or https:// URL") == true)
    }

    @Test func aSyncJobIsAWallOfHTTPMediaAndSaysWhereItIsWrong() throws {
        let (config, _) = try CastlineConfiguration.parse("""
            jobs:
              - {name: wall, devices: ["Wall*"], media: {items: [http://a/1.mp4, http://a/2.mp4]}, sync: true}
            """, file: "c.yaml")
        #expect(config.jobs[0].sync && config.jobs[0].media.items?.count == 2)
        #expect(try JobEntry.parse(config.jobs[0].json.serialized(), source: "api").sync)
        #expect(errors("jobs:\n  - {name: a, devices: [x], media: /srv/a.mp4, sync: true}\n")
                == ["c.yaml:2:48: error: jobs[0].sync: a wall's TVs fetch the media themselves; give http(s) URLs, not files or folders"])
        #expect(errors("jobs:\n  - {name: a, devices: [x], site: http://a/, sync: true}\n")
                == ["c.yaml:2:46: error: jobs[0].sync is for media (a video wall), not a site or a schedule"])
    }

    @Test func aJobWithBothMediaAndSiteOrNeitherIsAnError() {
        #expect(errors("jobs:\n  - {name: a, devices: [x], media: http://a/m.mp4, site: http://a/}\n")
                == ["c.yaml:2:52: error: jobs[0] has both media and site: a job casts one or the other"])
        #expect(errors("jobs:\n  - {name: a, devices: [x]}\n")
                == ["c.yaml:2:5: error: jobs[0] needs media (what to play), site (a web page to keep shown) or announce (an announcement to play and then restore)"])
        #expect(errors("jobs:\n  - {name: a, devices: [x], site: {url: /srv/board.html}}\n").first?.contains("must be an http:// or https:// URL") == true)
    }

    @Test func anEmptyFileIsTheDefaultConfiguration() throws {
        let (config, warnings) = try CastlineConfiguration.parse("", file: "empty.yaml")
        #expect(warnings.isEmpty && config.jobs.isEmpty && config.devices.isEmpty)
        #expect(config.session.heartbeatInterval == 5 && config.discovery.allowedServices == ["_googlecast._tcp"])
    }

    @Test func unknownKeysNameThePlaceTheAllowedKeysAndTheLikelyOne() {
        #expect(errors("devices:\n  - name: A\n    host: h\n    prot: 8009\n") == [
            "c.yaml:4:5: error: unknown key \"prot\" in devices[0] (did you mean \"port\"?); allowed: name, host, port, id, aliases, model",
        ])
        #expect(errors("logging: {}\nlogin: {}\n") == [
            "c.yaml:2:1: error: unknown key \"login\" in the top level (did you mean \"logging\"?); allowed: "
                + CastlineConfiguration.topLevelKeys.joined(separator: ", "),
        ])
    }

    @Test func wrongTypesAreErrorsAtTheValue() {
        #expect(errors("devices:\n  - {name: A, host: h, port: \"eighty\"}\n") == [
            "c.yaml:2:30: error: devices[0].port must be a whole number between 1 and 65535, not \"eighty\"",
        ])
        #expect(errors("discovery:\n  autostart: yes\n") == [
            "c.yaml:2:14: error: discovery.autostart must be true or false, not \"yes\"",
        ])
        #expect(errors("jobs: {name: x}\n") == ["c.yaml:1:7: error: jobs must be a list (lines starting with \"- \"), not a mapping"])
        #expect(errors("session:\n  heartbeat_interval: 0\n") == [
            "c.yaml:2:23: error: session.heartbeat_interval must be between 0.1 and 300 seconds, not 0",
        ])
        #expect(errors("session: {device_auth: maybe}\n") == [
            "c.yaml:1:24: error: session.device_auth must be one of off, warn, require, not \"maybe\"",
        ])
    }

    @Test("a value that is not a number reads naturally: \"must be a number of seconds …, not \"abc\"\"")
    func aNonNumberDurationIsNamedPlainly() {
        #expect(errors("jobs:\n  - {name: j, devices: x, media: \"http://h/a.mp4\", retry_delay: abc}\n") == [
            "c.yaml:2:65: error: jobs[0].retry_delay must be a number of seconds between 0.1 and 3600, not \"abc\"",
        ])
        #expect(errors("discovery: {timeout: [1]}\n") == [
            "c.yaml:1:22: error: discovery.timeout must be a number of seconds between 0.1 and 3600, not a list",
        ])
    }

    @Test("devices[].model: a model name that wins over the device's own; an empty one is an error")
    func aDeviceModelCanBeGiven() throws {
        let (config, _) = try CastlineConfiguration.parse(
            "devices:\n  - {name: Kitchen display, host: 10.0.0.5, model: Google Nest Hub}\n  - {name: TV, host: 10.0.0.6}\n", file: "c.yaml")
        #expect(config.devices.map(\.model) == ["Google Nest Hub", nil])
        #expect(errors("devices:\n  - {name: A, host: h, model: \"\"}\n") == [
            "c.yaml:2:31: error: devices[0].model must name a model such as \"Google Nest Hub\" (as eureka_info or `castline discover` shows it), not an empty string",
        ])
    }

    @Test func everyErrorIsReportedNotOnlyTheFirst() {
        let found = errors("""
            receiver_app_id: "not an id"
            devices:
              - name: A
            jobs:
              - name: j
                devices: ["Lobby[*"]
                media: ftp://x/y
                takeover: sometimes
            """)
        #expect(found.count == 5, "\(found)")
        #expect(found.contains { $0.hasPrefix("c.yaml:1:18: error: receiver_app_id") })
        #expect(found.contains("c.yaml:3:5: error: devices[0] needs \"host\""))
        #expect(found.contains { $0.hasPrefix("c.yaml:6:14: error: jobs[0].devices[0] \"Lobby[*\"") })
        #expect(found.contains("c.yaml:7:12: error: jobs[0].media must be an http:// or https:// URL or an absolute file path, not \"ftp://x/y\""))
        #expect(found.contains { $0.hasPrefix("c.yaml:8:15: error: jobs[0].takeover must be one of yield, reclaim") })
    }

    @Test func logRuleErrorsPointAtTheCharacterInsideTheValue() {
        // "*:info,Cast[:debug": the bad glob starts at offset 7; the quoted value at column 10.
        let found = errors("logging:\n  rules: \"*:info,Cast[:debug\"\n")
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("c.yaml:2:") == true, "\(found)")
        let plain = errors("logging:\n  rules: info,*Session:loud\n")
        #expect(plain.count == 1)
        #expect(plain.first?.hasPrefix("c.yaml:2:24: error: logging.rules: unknown level") == true, "\(plain)")
    }

    @Test func duplicatesAcrossEntriesAndYAMLSyntaxErrorsAreReported() {
        #expect(errors("devices:\n  - {name: A, host: h}\n  - {name: B, host: i, aliases: [A]}\n") == [
            "c.yaml:3:5: error: device name \"A\" is used twice (first at 2:5): names and aliases must be unique",
        ])
        let syntax = errors("jobs:\n  - name: x\n   devices: y\n")
        #expect(syntax.count == 1 && syntax[0].hasPrefix("c.yaml:3:") && syntax[0].contains("YAML syntax"), "\(syntax)")
    }

    @Test func warningsDoNotFailTheFile() throws {
        let (config, warnings) = try CastlineConfiguration.parse(
            "jobs:\n  - {name: j, devices: x, media: \"http://h/a.mp4\", takeover: reclaim, reclaim_after: 5}\n", file: "w.yaml")
        #expect(config.jobs.count == 1)
        #expect(warnings.map(\.description) == [
            "w.yaml:2:71: warning: jobs[0].reclaim_after has no effect with takeover: reclaim (the job reclaims at once)",
        ])
    }

    @Test func unreadableFilesAreOneClearDiagnostic() {
        for (path, message) in [("/nonexistent/c.yaml", "cannot open: No such file or directory"), ("/tmp", "not a regular file")] {
            do {
                _ = try CastlineConfiguration.load(path: path)
                Issue.record("loaded \(path)")
            } catch {
                #expect(error.description == "\(path):1:1: error: \(message)")
            }
        }
    }
}
