import CastCore
import CastSender
import Foundation
import SystemCrypto
import Testing

@Suite("Sender value types")
struct SenderValueTests {
    @Test("MediaInformationBuilder: movie metadata with an image, the JSON a LOAD carries; bad input refused")
    func builder() throws {
        let media = try MediaInformationBuilder(contentID: "https://example.com/a.mp4").contentType("video/mp4")
            .streamType(.live).movie(title: "A", studio: "S").image("https://example.com/p.jpg", width: 10, height: 20)
            .duration(12.5).customData(["k": 1]).build()
        #expect(media.json.serialized() == #"{"contentId":"https://example.com/a.mp4","streamType":"LIVE","contentType":"video/mp4","metadata":{"metadataType":1,"title":"A","images":[{"url":"https://example.com/p.jpg","width":10,"height":20}],"studio":"S"},"duration":12.5,"customData":{"k":1}}"#)
        #expect(throws: MediaInformationBuilder.Error.emptyContentID) { try MediaInformationBuilder(contentID: "").build() }
        #expect(throws: MediaInformationBuilder.Error.invalidDuration(-1)) { try MediaInformationBuilder(contentID: "x").duration(-1).build() }
        let track = MediaTrack(trackID: 3, type: .text)
        #expect(throws: MediaInformationBuilder.Error.duplicateTrackID(3)) {
            try MediaInformationBuilder(contentID: "x").tracks([track, track]).build()
        }
    }

    @Test("VideoInfo: 4K in either orientation, HDR for hdr and dv only, badges")
    func videoInfo() {
        #expect(VideoInfo(width: 3840, height: 2160, hdrType: .hdr).badge == "4K HDR")
        #expect(VideoInfo(width: 2160, height: 3840).is4K)
        #expect(!VideoInfo(width: 1920, height: 1080, hdrType: .dolbyVision).is4K)
        #expect(VideoInfo(width: 1920, height: 1080, hdrType: .dolbyVision).badge == "1080p DV")
        #expect(!VideoInfo(width: 3840, height: 2160, hdrType: .sdr).isHDR)
        #expect(!VideoInfo(width: 3840, height: 2160, hdrType: HDRType(rawValue: "hlg-unknown")).isHDR)
        #expect(!VideoInfo(width: 3840, height: 2160).isHDR)
    }

    @Test("the public Cast roots ship: two self-signed CAs with the published SHA-256 fingerprints")
    func defaultAnchors() {
        let roots = DefaultTrustAnchors.castRoots
        #expect(roots.map(\.commonName) == ["Cast Root CA", "Eureka Root CA"])
        let fingerprints = roots.map { Digest.sha256($0.derBytes).map { String(format: "%02x", $0) }.joined() }
        #expect(fingerprints == ["809af14700b3fe2611ad597eb1584d6354313b64ccdb3390f097fa3e5826d6ca",
                                 "caf6d1e37b532203e01a76bf07187bb731ccd38801565ab2211a2c0ab7f3bc46"])
        #expect(roots.allSatisfy { $0.isSelfSigned && $0.isCertificateAuthority })
        #expect(CastOptions().trustAnchors.isEmpty, "empty options mean the default roots")
    }

    @Test("resume store: concurrent saves from many sessions leave a whole, current file")
    func resumeStoreConcurrent() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("castline-concurrent-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SessionResumeStore(path: path)
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let device = CastDevice(id: "device-\(index)", friendlyName: "TV \(index)", host: "127.0.0.\(index % 250 + 1)")
                    try? store.save(SessionResumeRecord(device: device, appID: "CC1AD845", sessionID: "s\(index)", transportID: "t\(index)"))
                }
            }
        }
        let reread = try SessionResumeStore(path: path)
        #expect(Set(reread.saved.map(\.sessionID)) == Set((0..<64).map { "s\($0)" }))
    }

    @Test("resume store: records per device survive a new instance, the last removal deletes the file, mode 0600")
    func resumeStore() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("castline-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("sessions.json").path
        let store = try SessionResumeStore(path: path)
        #expect(store.saved.isEmpty)
        let a = SessionResumeRecord(device: CastDevice(id: "a", friendlyName: "Lobby", host: "127.0.0.1", port: 8009),
                                    appID: "CC1AD845", sessionID: "s1", transportID: "s1")
        var b = a
        b.device.id = "b"
        b.sessionID = "s2"
        try store.save(a)
        try store.save(b)
        var a2 = a
        a2.sessionID = "s3"
        try store.save(a2)
        let reopened = try SessionResumeStore(path: path)
        #expect(reopened.saved.map(\.sessionID) == ["s3", "s2"])
        #expect(reopened.saved.first?.device.friendlyName == "Lobby")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try reopened.remove(deviceID: "a")
        try reopened.remove(deviceID: "b")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("resume store: a malformed file is an error naming the path and the entry")
    func resumeStoreMalformed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("castline-bad-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #"{"version":1,"sessions":[{"device":{"id":"a","host":"h","port":70000},"appId":"x","sessionId":"s","transportId":"t"}]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try SessionResumeStore(path: path)
            Issue.record("accepted port 70000")
        } catch {
            #expect("\(error)".contains(path) && "\(error)".contains("sessions[0]") && "\(error)".contains("port"), "\(error)")
        }
        try "{not json".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: SessionResumeStore.Error.self) { try SessionResumeStore(path: path) }
        // Repairing: the bad file is moved aside and the store starts empty and works.
        defer { try? FileManager.default.removeItem(atPath: path + ".corrupt") }
        let (store, repaired) = try SessionResumeStore.openRepairing(path: path)
        #expect(repaired != nil && "\(repaired!)".contains(".corrupt"))
        #expect(store.saved.isEmpty)
        #expect(try String(contentsOfFile: path + ".corrupt", encoding: .utf8) == "{not json")
        try store.save(SessionResumeRecord(device: CastDevice(id: "a", friendlyName: "A", host: "h"), appID: "x", sessionID: "s", transportID: "t"))
        #expect(try SessionResumeStore(path: path).saved.count == 1)
    }
}

@Suite struct DisplaySupportTests {
    let uhdHDR = MediaFormatInfo(contentType: "application/x-mpegURL", videoInfo: VideoInfo(width: 3840, height: 2160, hdrType: .hdr),
                                 hdrType: .hdr, hdrFormat: "HDR10", videoCodecs: ["hvc1.2.4.L153.B0"])

    func device(model: String, ca: UInt64? = nil) -> CastDevice {
        var d = CastDevice(id: "x", friendlyName: "Lobby", host: "127.0.0.1", modelName: model)
        d.capabilities = ca.map { CastDeviceCapabilities(rawValue: $0) }
        return d
    }

    @Test func firstGenerationChromecastWarnsFor4KAndHDR() {
        let d = device(model: "Chromecast", ca: 4101)
        let warnings = DisplaySupport.of(d).warnings(for: uhdHDR, device: d)
        #expect(warnings.count == 2)
        #expect(warnings[0].contains("cannot show 4K: 3840x2160"))
        #expect(warnings[1].contains("cannot show HDR: HDR10"))
    }

    @Test func ultraAndUnknownModelsGiveNoWarning() {
        for d in [device(model: "Chromecast Ultra"), device(model: "Some TV 2031", ca: 465413)] {
            #expect(DisplaySupport.of(d).warnings(for: uhdHDR, device: d).isEmpty, "\(d.modelName)")
        }
    }

    @Test func audioOnlyBySpeakerBitsOrDeviceAuth() {
        let speaker = device(model: "Unknown speaker", ca: 198660) // no video-out bit (Home Mini's real value)
        #expect(DisplaySupport.of(speaker).warnings(for: uhdHDR, device: speaker).first?.contains("no video output") == true)
        let tv = device(model: "Chromecast Ultra")
        #expect(DisplaySupport.of(tv, audioOnly: true).video == false)
        let audio = MediaFormatInfo(contentType: "audio/mpeg")
        #expect(DisplaySupport.of(speaker).warnings(for: audio, device: speaker).isEmpty)
    }

    @Test func builderTakesProbedFieldsButExplicitOnesWin() throws {
        let probed = MediaFormatInfo(contentType: "application/x-mpegURL", streamType: .live)
        let filled = try MediaInformationBuilder(contentURL: "https://example.com/live.m3u8").applying(probed).build()
        #expect(filled.contentType == "application/x-mpegURL")
        #expect(filled.streamType == .live)
        let explicit = try MediaInformationBuilder(contentURL: "https://example.com/live.m3u8")
            .contentType("application/vnd.apple.mpegurl").streamType(.buffered).applying(probed).build()
        #expect(explicit.contentType == "application/vnd.apple.mpegurl")
        #expect(explicit.streamType == .buffered)
    }
}
