import CastCore
import CastLogging
@testable import CastPluginHost
import CastTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Media formats and log sinks of plugins run in the built `castline plugin-host`
/// (`plugins.isolated`): the same answers and records as in process, and a crash or a hang in
/// the helper costs one probe or a counted batch, never this process.
@Suite struct IsolatedFeatureTests {
    static let castline = BuiltProducts.folder + "/castline"
    static let formats = BuiltProducts.library("CastlinePluginMediaFormats")
    static let json = BuiltProducts.library("CastlinePluginJSONSink")
    static let blocks = BuiltProducts.library("TestPluginBlocks")

    func rig(_ path: String, isolating id: String, bound: Double = 5, config: String? = nil) throws -> PluginHostRig {
        let rig = try PluginHostRig(paths: [path]) {
            $0.scanner = PluginScanner(executable: Self.castline, timeout: 5)
            $0.callTimeout = bound
            $0.isolatedPlugins = [id]
            $0.allowedNamespaces = ["urn:x-cast:org.castline.test"]
            if let config { $0.pluginConfigs = [id: config] }
        }
        rig.host.loadAll()
        return rig
    }

    @Test func anIsolatedMediaFormatAnswersAsInProcess() throws {
        let inProcess = try PluginHostRig(paths: [Self.formats])
        inProcess.host.loadAll()
        let isolated = try rig(Self.formats, isolating: "media-formats")
        let helper = try #require(isolated.host.isolatedPlugin("media-formats"))
        #expect(helper.helperPID != nil && isolated.host.problems.isEmpty, "\(isolated.host.problems)")
        let manifest = Array("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=20000000,RESOLUTION=3840x2160,CODECS=\"hvc1.2.4.L153.B0\",VIDEO-RANGE=PQ\n4k.m3u8\n".utf8)
        for (url, type, body) in [("https://cdn.example/live/master.m3u8", nil, manifest), ("https://cdn.example/clip.mp4", nil, nil),
                                  ("https://cdn.example/a", "audio/flac", nil)] as [(String, String?, [UInt8]?)] {
            let a = inProcess.host.probeMediaFormat(url: url, contentType: type, body: body)
            let b = isolated.host.probeMediaFormat(url: url, contentType: type, body: body)
            #expect(a == b, "\(url): in process \(a), isolated \(b)")
            if case .failure(let error) = b { Issue.record("\(url): \(error)") }
        }
        isolated.host.shutdown()
        inProcess.host.shutdown()
    }

    @Test func aProbeThatHangsInTheHelperIsGivenUpTheHelperKilledAndRestarted() async throws {
        let rig = try rig(Self.blocks, isolating: "test-blocks", bound: 0.5, config: #"{"block_ms": 60000}"#)
        let helper = try #require(rig.host.isolatedPlugin("test-blocks"))
        let firstPID = try #require(helper.helperPID)
        let start = ContinuousClock.now
        let probed = rig.host.probeMediaFormat(url: "http://a/x", contentType: "application/x-blocking")
        let took = ContinuousClock.now - start
        guard case .failure(let error) = probed else {
            Issue.record("a probe that blocks 60 s answered: \(probed)")
            return
        }
        #expect(error.reason.contains("did not return within 0.5 s (plugins.call_timeout) in its helper process, which was killed"), "\(error)")
        #expect(took < .seconds(10), "\(took)")
        let restarted = await pollValue(timeout: 30) { () -> Int32? in
            guard let pid = helper.helperPID, pid != firstPID else { return nil }
            return pid
        }
        #expect(restarted != nil, "the helper (pid \(firstPID)) was not replaced")
        #expect(kill(firstPID, 0) != 0)
        rig.host.shutdown()
    }

    @Test func anIsolatedJSONSinkWritesEveryRecordAndCountsWhatACrashCost() async throws {
        let rig = try rig(Self.json, isolating: "json-sink")
        let helper = try #require(rig.host.isolatedPlugin("json-sink"))
        let folder = ScratchFolder("isolated-json")
        defer { folder.remove() }
        let path = folder.path + "/castline.jsonl"
        let sink = try rig.host.openAnyLogSink(id: "json", options: #"{"path": "\#(path)"}"#)
        #expect(sink is IsolatedLogSink)
        let system = LogSystem()
        system.addSink(sink)
        let log = Logger(class: "CastSession", system: system)
        for i in 0..<1000 { log.info("record \(i) \"quoted\"\té", ["device": "Lobby TV", "n": .int(Int64(i)), "rate": 1.5, "ok": true]) }
        system.flush()
        let written = await pollValue(timeout: 30) { () -> [String]? in
            let lines = (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
            return lines.count >= 1000 ? lines : nil
        } ?? []
        #expect(written.count == 1000)
        let last = try JSONValue.parse(written.last ?? "{}")
        #expect(last["body"]?.string == "record 999 \"quoted\"\té")
        #expect(last["attributes"]?["n"] == 999 && last["attributes"]?["rate"]?.double == 1.5 && last["attributes"]?["ok"] == true)
        #expect(last["class"] == "CastSession" && last["level"] == "info")

        // kill -9 of the helper: batches meanwhile are counted as dropped, then the sink is
        // opened again in the new helper and writes resume.
        let firstPID = try #require(helper.helperPID)
        kill(firstPID, SIGKILL)
        // Down until the restart (0.5 s later): what is logged meanwhile is dropped and counted.
        #expect(await pollUntil(timeout: 10) { helper.helperPID == nil })
        for i in 0..<10 { log.info("while down \(i)") }
        system.flush()
        #expect(await pollUntil(timeout: 10) { sink.discarded >= 10 },
                "discarded \(sink.discarded) while the helper was down")
        #expect(await pollUntil(timeout: 10) { helper.helperPID != nil && helper.helperPID != firstPID })
        let resumed = await pollValue(timeout: 30) { () -> Bool? in
            log.info("after the crash")
            system.flush()
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.contains("after the crash") ? true : nil
        }
        #expect(resumed == true, "records reach the file again after the restart")
        #expect(rig.records(class: "IsolatedPlugin").contains { $0.level == .error && $0.fields["signal"] == .string("SIGKILL") })
        #expect(system.shutdown())
        (sink as? IsolatedLogSink)?.close()
        rig.host.shutdown()
    }
}
