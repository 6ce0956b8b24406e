import CastCore
import CastProtocol
import Testing
@testable import CastReceiverSim
import CastTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Real devices' payloads (`Tests/Fixtures/real/`, transcribed from public issue threads): the
/// sender's decoders read every one, and the simulator's message for the same situation has the
/// same key paths.
@Suite("Real device payloads")
struct RealPayloadTests {
    struct Fixture {
        var name: String
        var source: String
        var situation: String
        var message: JSONValue
        var then: JSONValue?
    }

    static func load(_ name: String) throws -> Fixture {
        let json = try RealFixtures.json(name)
        guard let source = json["source"]?.string, let situation = json["situation"]?.string, let message = json["message"] else {
            throw RealFixtures.Unreadable(path: RealFixtures.folder + "/" + name, reason: "no source, situation or message")
        }
        return Fixture(name: name, source: source, situation: situation, message: message, then: json["then"])
    }

    static let names = ["media-loading-2020.json", "media-loading-2018.json", "media-no-session-2021.json",
                        "receiver-dmr-running-2024.json", "load-failed-2020.json"]

    /// Every key path of `value`: `a.b` for members, `a[]` for array elements (all elements merged).
    static func keyPaths(_ value: JSONValue, prefix: String = "") -> Set<String> {
        var paths: Set<String> = []
        if case .object(let object) = value {
            for (key, member) in object {
                let path = prefix.isEmpty ? key : "\(prefix).\(key)"
                paths.insert(path)
                paths.formUnion(keyPaths(member, prefix: path))
            }
        } else if case .array(let items) = value {
            for item in items { paths.formUnion(keyPaths(item, prefix: prefix + "[]")) }
        }
        return paths
    }

    @Test("castline's decoders read every real payload", arguments: names)
    func decodes(name: String) throws {
        let fixture = try Self.load(name)
        #expect(fixture.source.hasPrefix("https://github.com/"))
        switch fixture.message["type"]?.string {
        case "LOAD_FAILED":
            guard case .loadFailed(_, let itemID, let code) = try MediaMessage(json: fixture.message) else {
                Issue.record("\(name): not decoded as LOAD_FAILED")
                return
            }
            #expect(itemID == 1 && code == .mediaSrcNotSupported)
            let then = try #require(fixture.then)
            guard case .mediaStatus(_, let statuses) = try MediaMessage(json: then) else {
                Issue.record("\(name): the status after it is not decoded")
                return
            }
            #expect(statuses.first?.idleReason == .error && statuses.first?.media == nil)
        case "MEDIA_STATUS":
            guard case .mediaStatus(_, let statuses) = try MediaMessage(json: fixture.message) else {
                Issue.record("\(name): not decoded as MEDIA_STATUS")
                return
            }
            #expect(statuses.count == (fixture.message["status"]?.array?.count ?? -1))
            for status in statuses where fixture.situation == "loading" {
                #expect(status.playerState == .idle && status.extendedStatus?.playerState == .loading, "\(name)")
            }
        case "RECEIVER_STATUS":
            guard case .receiverStatus(_, let status) = try ReceiverMessage(json: fixture.message) else {
                Issue.record("\(name): not decoded as RECEIVER_STATUS")
                return
            }
            #expect(status.applications.first?.appID == "CC1AD845")
        default:
            Issue.record("\(name): unexpected type")
        }
    }

    /// The first unsolicited MEDIA_STATUS after a LOAD of `media` (the LOADING status) as JSON.
    static func simulatorLoadingStatus(media: JSONValue) throws -> JSONValue {
        var sim = SimHarness()
        sim.launchDMR()
        let outputs = sim.media("LOAD", ["media": media, "autoplay": true])
        let loading = SimHarness.sent(outputs, on: .media).first { $0.type == "MEDIA_STATUS" && $0.requestID == 0 }
        return try #require(loading).json
    }

    @Test("the LOADING status right after a LOAD: the simulator's key paths are the 2020 device's")
    func loadingKeyPaths() throws {
        let real = try Self.load("media-loading-2020.json").message
        let media = try #require(real["status"]?[0]?["media"])
        // The LOAD carried what the device echoed, without the receiver-added mediaCategory.
        var sent = try #require(media.object)
        _ = sent.remove("mediaCategory")
        let ours = try Self.simulatorLoadingStatus(media: .object(sent))
        let realPaths = Self.keyPaths(real)
        let ourPaths = Self.keyPaths(ours)
        #expect(realPaths.subtracting(ourPaths).sorted() == [], "the real device sent keys the simulator does not")
        #expect(ours["status"]?[0]?["media"]?["mediaCategory"]?.string == "VIDEO", "derived from video/mp4 as the device did")
        // Known difference, with its reason; anything else fails.
        // - metadataType: castline's MediaInformation re-encodes `metadata: {}` as a generic
        //   metadata object (`metadataType: 0`); the device echoed `{}`.
        #expect(ourPaths.subtracting(realPaths).sorted() == ["status[].extendedStatus.media.metadata.metadataType",
                                                              "status[].media.metadata.metadataType"],
                "the simulator sends keys the real device did not")
    }

    @Test("the 2018 device's LOADING status: the same shape without mediaCategory and extendedStatus.mediaSessionId")
    func olderLoadingKeyPaths() throws {
        let real = try Self.load("media-loading-2018.json").message
        let media = try #require(real["status"]?[0]?["media"])
        let ours = try Self.simulatorLoadingStatus(media: media)
        let missing = Self.keyPaths(real).subtracting(Self.keyPaths(ours))
        #expect(missing.isEmpty, "the real device sent keys the simulator does not: \(missing.sorted())")
    }

    @Test("a LOAD whose media fails: LOAD_FAILED and the IDLE / ERROR status after it have the 2020 device's key paths")
    func loadFailedKeyPaths() throws {
        let fixture = try Self.load("load-failed-2020.json")
        var sim = SimHarness(timing: PlaybackTiming(bufferingDelay: 0.25, checksLoopbackMedia: true))
        sim.launchDMR()
        let outputs = sim.load(contentID: "http://127.0.0.1:8099/tts.mp3", contentType: "audio/mpeg")
        let request = try #require(outputs.compactMap { output -> MediaCheckRequest? in
            if case .checkMedia(let request) = output { return request } else { return nil }
        }.first)
        let failed = SimHarness.sent(sim.device.mediaChecked(mediaSessionID: request.mediaSessionID, failure: .mediaSrcNotSupported,
                                                             reason: "HTTP 404", now: sim.now), on: .media)
        #expect(failed.map(\.type) == ["LOAD_FAILED", "MEDIA_STATUS"])
        #expect(Self.keyPaths(try #require(failed.first).json) == Self.keyPaths(fixture.message))
        #expect(Self.keyPaths(try #require(failed.last).json) == Self.keyPaths(try #require(fixture.then)))
    }

    @Test("RECEIVER_STATUS with the Default Media Receiver running: the simulator's key paths are the 2024 display's")
    func receiverKeyPaths() throws {
        let real = try Self.load("receiver-dmr-running-2024.json").message
        var sim = SimHarness()
        sim.connect()
        let outputs = sim.receiver("LAUNCH", ["appId": "CC1AD845"])
        let ours = try #require(SimHarness.sent(outputs, on: .receiver).first { $0.type == "RECEIVER_STATUS" }).json
        let realPaths = Self.keyPaths(real)
        let ourPaths = Self.keyPaths(ours)
        // Known differences, each with its reason; anything else fails.
        // - userEq: smart displays and speakers report their equaliser; the simulator has none.
        #expect(realPaths.subtracting(ourPaths).filter { !$0.hasPrefix("status.userEq") }.sorted() == [],
                "the real device sent keys the simulator does not")
        // - isActiveInput / isStandBy: the simulator's video device reports them as an HDMI
        //   dongle does (pychromecast reads them); this display sent neither.
        #expect(ourPaths.subtracting(realPaths).sorted() == ["status.isActiveInput", "status.isStandBy"],
                "the simulator sends keys the real device did not")
    }
}
