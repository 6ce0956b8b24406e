import CastCore
import CastProtocol
import CastTestSupport
import Testing
@testable import CastReceiverSim

/// Feeds a device thousands of seeded random events (valid requests with mutated fields, random
/// JSON, garbage text, connection churn, time jumps, control calls) and checks every output.
@Suite("Receiver simulator: randomized input")
struct RandomizedInputTests {
    static let echoNS: CastNamespace = "urn:x-cast:com.example.echo"
    static let scriptNS: CastNamespace = "urn:x-cast:com.example.script"

    struct Fuzzer {
        var rng: SplitMix64
        var sim: SimHarness
        /// The last step was a control push (its payload is the operator's, not a reply).
        var lastWasPush = false

        init(seed: UInt64) {
            rng = SplitMix64(seed: seed)
            let app = AppDefinition(
                appID: "C0FFEE00", displayName: "Custom", namespaces: [echoNS, .media],
                customNamespaces: [CustomNamespaceBehaviour(namespace: scriptNS, mode: .scripted(["HI": ["type": "HO"]]))]
            )
            sim = SimHarness(
                catalogue: [.defaultMediaReceiver, app, .backdrop],
                rules: [
                    MediaRule(contentIdGlob: "*bad*", loadError: .mediaDecode),
                    MediaRule(contentTypeGlob: "video/*", videoInfo: VideoInfo(width: 3840, height: 2160, hdrType: .dolbyVision), duration: 3),
                ],
                timing: PlaybackTiming(bufferingDelay: 0.25), seed: seed
            )
        }

        mutating func pick<T>(_ choices: [T]) -> T { choices[Int(rng.next() % UInt64(choices.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
        mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }

        mutating func randomString() -> String {
            let pieces = ["a", "Z", "0", "-", "*", "\"", "\\", "\u{0}", "é", "🎬", "http://x/", ".mp4", "CC1AD845", "LIVE", " "]
            return (0..<int(0...6)).map { _ in pick(pieces) }.joined()
        }

        mutating func randomJSON(depth: Int = 0) -> JSONValue {
            switch int(0...(depth > 2 ? 5 : 7)) {
            case 0: return .null
            case 1: return .bool(chance(50))
            case 2: return .int(Int64(bitPattern: rng.next()) >> Int64(int(0...63)))
            case 3: return .double(pick([0, -1, 0.5, 1e308, -1e-308, 3.25, 60, 1e9]))
            case 4, 5: return .string(randomString())
            case 6: return .array((0..<int(0...3)).map { _ in randomJSON(depth: depth + 1) })
            default:
                var object = JSONObject()
                for _ in 0..<int(0...4) { object.set(pick(Self.keys), randomJSON(depth: depth + 1)) }
                return .object(object)
            }
        }

        static let keys = [
            "type", "requestId", "mediaSessionId", "media", "contentId", "appId", "sessionId", "volume", "level", "muted",
            "currentTime", "relativeTime", "resumeState", "items", "itemIds", "jump", "currentItemId", "repeatMode",
            "insertBefore", "startIndex", "autoplay", "playbackRate", "activeTrackIds", "connType", "shuffle",
        ]
        static let receiverTypes = ["GET_STATUS", "LAUNCH", "LAUNCH", "LAUNCH", "STOP", "SET_VOLUME", "GET_APP_AVAILABILITY", "RECEIVER_STATUS", "NOPE"]
        static let mediaTypes = [
            "LOAD", "LOAD", "LOAD", "QUEUE_LOAD", "PLAY", "PAUSE", "STOP", "SEEK", "GET_STATUS", "SET_VOLUME", "SET_PLAYBACK_RATE", "EDIT_TRACKS_INFO",
            "QUEUE_LOAD", "QUEUE_INSERT", "QUEUE_UPDATE", "QUEUE_REMOVE", "QUEUE_REORDER", "QUEUE_NEXT", "QUEUE_PREV",
            "QUEUE_GET_ITEM_IDS", "QUEUE_GET_ITEMS", "MEDIA_STATUS", "DANCE",
        ]

        mutating func mediaInfo() -> JSONValue {
            [
                "contentId": .string(pick(["http://x/a.mp4", "http://x/bad.mkv", randomString()])),
                "contentType": .string(pick(["video/mp4", "audio/mpeg", "music"])),
                "streamType": .string(pick(["BUFFERED", "LIVE", "NONE"])),
                "duration": pick([.double(4), .int(0), .null, .double(1e300)]),
                "metadata": ["metadataType": 0, "title": .string(randomString())],
            ]
        }

        /// A plausible request whose members are sometimes replaced by random JSON.
        mutating func request(types: [String]) -> JSONValue {
            var object: JSONObject = ["type": .string(pick(types))]
            if chance(95) { object.set("requestId", .int(Int64(int(1...50)))) }
            let members: [(String, JSONValue)] = [
                ("appId", .string(pick(["CC1AD845", "C0FFEE00", "E8C28D3C", "XXXX"]))),
                ("sessionId", .string(sim.transportID ?? "none")),
                ("volume", ["level": .double(Double(int(-5...15)) / 10), "muted": .bool(chance(50))]),
                ("mediaSessionId", .int(Int64(chance(70) ? (sim.snapshot.media?.mediaSessionID ?? 1) : int(0...4)))),
                ("media", mediaInfo()),
                ("autoplay", pick([true, false, "false", "true", 1])),
                ("currentTime", .double(Double(int(-2...70)))),
                ("relativeTime", .double(Double(int(-20...20)))),
                ("resumeState", pick(["PLAYBACK_START", "PLAYBACK_PAUSE", "X"])),
                ("items", .array((0..<int(0...4)).map { _ in ["media": mediaInfo(), "autoplay": true] })),
                ("itemIds", .array((0..<int(0...3)).map { _ in .int(Int64(int(0...12))) })),
                ("jump", .int(Int64(int(-3...3)))),
                ("currentItemId", .int(Int64(int(0...12)))),
                ("insertBefore", .int(Int64(int(0...12)))),
                ("startIndex", .int(Int64(int(-1...4)))),
                ("repeatMode", pick(["REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE", "REPEAT_ALL_AND_SHUFFLE", "SIDEWAYS"])),
                ("shuffle", .bool(chance(30))),
                ("playbackRate", pick([1, 2, 0.5, 0, -1, 100])),
                ("activeTrackIds", [1, 2]),
            ]
            let type = object["type"]?.string ?? ""
            let essential: Set<String> = type.hasSuffix("LOAD") ? ["media", "items"] : type == "LAUNCH" ? ["appId"] : []
            for (key, value) in members where chance(essential.contains(key) ? 90 : 35) { object.set(key, chance(10) ? randomJSON() : value) }
            return .object(object)
        }

        /// Mostly the endpoint the namespace belongs to, sometimes anything.
        mutating func destination(app: Bool) -> String {
            if chance(85) { return app ? (sim.transportID ?? "receiver-0") : "receiver-0" }
            return pick(["receiver-0", sim.transportID ?? "web-1", "*", randomString()])
        }

        mutating func payloadText(_ json: JSONValue) -> String {
            switch int(0...19) {
            case 0: return randomString()
            case 1: return String(json.serialized().dropLast(int(1...5)))
            case 2: return randomJSON().serialized()
            default: return json.serialized()
            }
        }

        /// The well-formed path (CONNECT, LAUNCH, CONNECT to the app, LOAD or QUEUE_LOAD), so that
        /// the random events also hit a playing media session.
        mutating func setUpPlayback(connection: UInt64) -> [DeviceOutput] {
            var out = sim.connect(connection)
            out += sim.receiver("LAUNCH", ["appId": pick(["CC1AD845", "C0FFEE00"])], connection: connection)
            guard let transport = sim.transportID else { return out }
            out += sim.connect(connection, to: transport)
            if chance(50) {
                out += sim.media("LOAD", ["media": mediaInfo(), "autoplay": pick([true, false, "false"])], connection: connection)
            } else {
                let items: [JSONValue] = (0..<int(1...4)).map { _ in ["media": mediaInfo()] }
                out += sim.media("QUEUE_LOAD", ["items": .array(items), "repeatMode": pick(["REPEAT_OFF", "REPEAT_ALL", "REPEAT_SINGLE"])],
                                 connection: connection)
            }
            return out
        }

        /// One random event; returns its outputs.
        mutating func step() -> [DeviceOutput] {
            let connection = UInt64(chance(80) ? int(1...2) : int(3...4))
            let sender = chance(80) ? "sender-0" : pick(["sender-vlc", "sender-\(int(0...99))"])
            lastWasPush = false
            if chance(4) { return setUpPlayback(connection: connection) }
            switch int(0...99) {
            case 0..<4: return sim.open(connection)
            case 4..<7: return sim.close(connection)
            case 7..<20:
                let type = pick(["CONNECT", "CONNECT", "CLOSE", "CONNECTED", "BOGUS"])
                var object: JSONObject = ["type": .string(type)]
                if chance(30) { object.set("connType", .int(Int64(int(-1...3)))) }
                if chance(20) { object.set("protocolVersionList", [0, 1, 2, 3, 7]) }
                return sim.raw(payloadText(.object(object)), on: .connection, to: destination(app: chance(50)), from: sender,
                               connection: connection)
            case 20..<40:
                let json = request(types: Self.receiverTypes)
                return sim.raw(payloadText(json), on: .receiver, to: destination(app: false), from: sender, connection: connection)
            case 40..<70:
                let json = request(types: Self.mediaTypes)
                return sim.raw(payloadText(json), on: .media, to: destination(app: true), from: sender, connection: connection)
            case 70..<76:
                let namespace = pick([echoNS, scriptNS, "urn:x-cast:com.example.nobody", .heartbeat, .deviceAuth, .multizone])
                return sim.raw(payloadText(["type": pick(["HI", "PING", "X"])]), on: namespace, to: destination(app: true), from: sender,
                               connection: connection)
            case 76..<88:
                sim.now += pick([0, 0.1, 0.25, 1, 3, 10, 1000])
                return sim.device.advance(to: sim.now)
            case 88..<90: sim.device.failNextLoad(pick([.mediaNetwork, DetailedErrorCode(rawValue: 999)])); return []
            case 90..<92: return sim.device.stopRunningApp(now: sim.now)
            case 92..<95:
                lastWasPush = true
                return sim.device.push(namespace: pick([echoNS, .receiver, .media, "urn:x-cast:x.y"]), payload: randomJSON(), now: sim.now)
            case 95: return sim.device.reboot(now: sim.now)
            case 96..<98:
                guard let session = sim.device.exportSession(now: sim.now) else { return [] }
                return sim.device.importSession(session, now: sim.now)
            default:
                sim.now += 0.125
                return sim.device.advance(to: sim.now)
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomEventsNeverBreakTheDevice(seed: UInt64) throws {
        var fuzzer = Fuzzer(seed: seed)
        var sends = 0
        var statuses = 0
        for _ in 0..<2500 {
            let before = fuzzer.sim.snapshot
            let outputs = fuzzer.step()
            let after = fuzzer.sim.snapshot
            let open = Set(before.connections + after.connections)
            let endpoints = Set(["receiver-0"] + [before.app?.transportID, after.app?.transportID].compactMap { $0 })
            for output in outputs {
                guard case .send(let message, let id) = output else { continue }
                sends += 1
                #expect(open.contains(id), "send to connection \(id) that is not open")
                #expect(endpoints.contains(message.sourceID), "source \(message.sourceID)")
                // Echoes carry the sender's own bytes, pushes the operator's.
                if message.namespace == Self.echoNS || fuzzer.lastWasPush { continue }
                guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text), let object = json.object else {
                    Issue.record("not a JSON object: \(message.payload) on \(message.namespace)")
                    continue
                }
                switch message.namespace {
                case .media:
                    let decoded = try? MediaMessage(json: json)
                    #expect(decoded != nil, "undecodable \(text)")
                    #expect(object["requestId"]?.int != nil, "no requestId in \(text)")
                    if case .mediaStatus(_, let list)? = decoded {
                        statuses += 1
                        for status in list {
                            #expect(status.currentTime.isFinite && status.currentTime >= 0)
                            #expect((status.idleReason != nil) == (status.playerState == .idle && status.extendedStatus == nil))
                        }
                    }
                case .receiver:
                    #expect((try? ReceiverMessage(json: json)) != nil, "undecodable \(text)")
                    #expect(object["requestId"]?.int != nil, "no requestId in \(text)")
                case .connection:
                    #expect(["CLOSE", "CONNECTED"].contains(object["type"]?.string ?? ""))
                default:
                    break
                }
            }
            if let deadline = fuzzer.sim.device.nextDeadline {
                #expect(deadline.isFinite && deadline < fuzzer.sim.now + 1e9)
            }
            #expect((try? JSONValue.parse(after.json.serialized())) == after.json)
        }
        // The run exercised the interesting paths, not only rejections.
        #expect(sends > 500 && statuses > 100, "\(sends) sends, \(statuses) MEDIA_STATUS")
    }
}
