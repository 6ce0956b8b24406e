import CastCore
import CastDeviceAuth
import CastLogging
import CastProtocol
import CastReceiverSim
import SystemCrypto

/// The `sim` target: the receiver simulator's message handling (``ReceiverDevice`` and the
/// device-auth responder) driven by a script of events, one per line, so that libFuzzer's
/// mutations of JSON text and event order both matter:
///
/// ```
/// o<conn>                open TCP connection <conn> (a digit)       c<conn>   close it
/// n<conn><r|a><json>     connection namespace to receiver-0 | the app (CONNECT, CLOSE...)
/// r<conn><json>          receiver namespace to receiver-0
/// m<conn><json>          media namespace to the running app
/// x<conn><k><json>       app namespace k: 0 echo, 1 scripted, else one nobody handles
/// d<conn><json>          any namespace to a destination nobody has (must be ignored)
/// a<bytes>               device-auth challenge bytes → responder (reply must verify)
/// t<byte>                advance the clock by byte × 50 ms
/// f<byte> s p<json> b e  fail next LOAD, stop the app, push, reboot, export+import session
/// ```
///
/// Invariants (a failure is a crash with the input saved): sends only go to open connections
/// from receiver-0 or the app; receiver and media replies are JSON objects the CastCore models
/// decode, with a requestId; MEDIA_STATUS times are finite and non-negative; the snapshot's JSON
/// round-trips; the next deadline is finite; a device-auth reply is a DeviceAuthMessage and an
/// answered challenge verifies against the simulator root.
enum SimulatorFuzzTarget {
    static let echo: CastNamespace = "urn:x-cast:com.example.echo"
    static let scripted: CastNamespace = "urn:x-cast:com.example.script"
    static let silent: CastNamespace = "urn:x-cast:com.example.silent"

    static let catalogue: [AppDefinition] = [
        .defaultMediaReceiver,
        AppDefinition(
            appID: "C0FFEE00", displayName: "Custom", namespaces: [echo, .media],
            customNamespaces: [
                CustomNamespaceBehaviour(namespace: scripted, mode: .scripted(["HI": ["type": "HO"]])),
                CustomNamespaceBehaviour(namespace: silent, mode: .silent),
            ]
        ),
        .backdrop,
    ]

    static let rules: [MediaRule] = [
        MediaRule(contentIdGlob: "*bad*", loadError: .mediaDecode),
        MediaRule(contentTypeGlob: "video/*", videoInfo: VideoInfo(width: 3840, height: 2160, hdrType: .hdr), duration: 3),
    ]

    /// One authority and device for every run (RSA key generation is slow).
    static let auth: (responder: DeviceAuthResponder, verifier: DeviceAuthVerifier, tlsDER: [UInt8]) = {
        do {
            let authority = try SimulatorAuthority.generate()
            let device = try DeviceCredentials.issue(for: "0123456789abcdef0123456789abcdef", authority: authority)
            return (DeviceAuthResponder(credentials: device, authority: authority),
                    DeviceAuthVerifier(trustAnchors: [authority.rootCertificate]), device.tlsCertificateDER)
        } catch {
            fatalError("fuzz: cannot create the simulator authority: \(error)")
        }
    }()

    /// Statements are evaluated (message autoclosures run) but nothing is written.
    static let logSystem = LogSystem(filter: LoggerFilter(minimumLevel: .verbose, rules: []))

    static func run(_ data: UnsafeRawBufferPointer) {
        let profile = DeviceProfile(uuid: "0123456789abcdef0123456789abcdef", friendlyName: "Fuzz", model: "Chromecast",
                                    isVideoDevice: true, initialVolume: 0.5, requiresVirtualConnection: true)
        var device = ReceiverDevice(profile: profile, catalogue: catalogue, mediaRules: rules,
                                    timing: PlaybackTiming(bufferingDelay: 0.25), idSeed: 7, logSystem: logSystem)
        var now = 1000.0
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
        if lines.count > 64 { lines = Array(lines.prefix(64)) }
        for line in lines {
            let before = device.snapshot(now: now)
            var pushed = false
            let outputs = step(Array(line), device: &device, now: &now, pushed: &pushed)
            check(outputs, before: before, after: device.snapshot(now: now), pushed: pushed)
            if let deadline = device.nextDeadline { precondition(deadline.isFinite, "deadline \(deadline)") }
        }
    }

    static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    static func connection(_ byte: UInt8?) -> SenderConnectionID { SenderConnectionID(UInt64((byte ?? 0) % 4) + 1) }

    static func message(_ namespace: CastNamespace, to destination: String, _ payload: ArraySlice<UInt8>) -> CastMessage {
        CastMessage(sourceID: "sender-0", destinationID: destination, namespace: namespace, payload: .string(text(payload)))
    }

    static func step(_ line: [UInt8], device: inout ReceiverDevice, now: inout Double, pushed: inout Bool) -> [DeviceOutput] {
        let op = line[0]
        let id = connection(line.dropFirst().first)
        let app = device.snapshot(now: now).app?.transportID ?? "web-0"
        switch op {
        case UInt8(ascii: "o"): return device.connectionOpened(id, now: now)
        case UInt8(ascii: "c"): return device.connectionClosed(id, now: now)
        case UInt8(ascii: "n"):
            let destination = line.dropFirst(2).first == UInt8(ascii: "a") ? app : ReceiverDevice.platformEndpoint
            return device.receive(message(.connection, to: destination, line.dropFirst(3)), from: id, now: now)
        case UInt8(ascii: "r"):
            return device.receive(message(.receiver, to: ReceiverDevice.platformEndpoint, line.dropFirst(2)), from: id, now: now)
        case UInt8(ascii: "m"):
            return device.receive(message(.media, to: app, line.dropFirst(2)), from: id, now: now)
        case UInt8(ascii: "x"):
            let kind = line.dropFirst(2).first ?? 0
            let namespace: CastNamespace = kind == UInt8(ascii: "0") ? echo : kind == UInt8(ascii: "1") ? scripted : silent
            return device.receive(message(namespace, to: app, line.dropFirst(3)), from: id, now: now)
        case UInt8(ascii: "d"):
            let ignoredBefore = device.snapshot(now: now).ignoredMessages
            let out = device.receive(message(.media, to: "nobody-\(now)", line.dropFirst(2)), from: id, now: now)
            precondition(device.snapshot(now: now).ignoredMessages == ignoredBefore + 1, "a message to nobody was not counted as ignored")
            return out
        case UInt8(ascii: "a"):
            deviceAuth(Array(line.dropFirst()))
            return []
        case UInt8(ascii: "t"):
            now += Double(line.dropFirst().first ?? 1) * 0.05
            return device.advance(to: now)
        case UInt8(ascii: "f"):
            device.failNextLoad(DetailedErrorCode(rawValue: Int(line.dropFirst().first ?? 0) + 100))
            return []
        case UInt8(ascii: "s"): return device.stopRunningApp(now: now)
        case UInt8(ascii: "p"):
            guard let json = try? JSONValue.parse(text(line.dropFirst())) else { return [] }
            pushed = true
            return device.push(namespace: .media, payload: json, now: now)
        case UInt8(ascii: "b"): return device.reboot(now: now)
        case UInt8(ascii: "e"):
            guard let session = device.exportSession(now: now) else { return [] }
            return device.importSession(session, now: now)
        default: return []
        }
    }

    static func deviceAuth(_ bytes: [UInt8]) {
        let reply = auth.responder.reply(to: bytes)
        let kind = DeviceAuthSummary.describe(reply.bytes)
        switch reply.outcome {
        case .answered:
            precondition(kind == "response", "an answered challenge produced \(kind)")
            do { _ = try auth.verifier.verify(reply: reply.bytes, peerCertificateDER: auth.tlsDER) } catch {
                preconditionFailure("the simulator's own reply does not verify: \(error)")
            }
        case .rejected:
            precondition(kind == "error", "a rejected challenge produced \(kind)")
        }
    }

    static func check(_ outputs: [DeviceOutput], before: DeviceSnapshot, after: DeviceSnapshot, pushed: Bool) {
        precondition((try? JSONValue.parse(after.json.serialized())) == after.json, "snapshot JSON does not round-trip")
        let open = Set(before.connections + after.connections)
        let endpoints = Set([ReceiverDevice.platformEndpoint] + [before.app?.transportID, after.app?.transportID].compactMap { $0 })
        for output in outputs {
            guard case .send(let message, let id) = output else { continue }
            precondition(open.contains(id), "send to connection \(id) that is not open")
            precondition(endpoints.contains(message.sourceID), "send from unknown endpoint \(message.sourceID)")
            if pushed || message.namespace == echo { continue }
            guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text), let object = json.object else {
                preconditionFailure("not a JSON object on \(message.namespace): \(message.payload)")
            }
            switch message.namespace {
            case .media:
                let decoded = try? MediaMessage(json: json)
                precondition(decoded != nil, "undecodable media reply \(text)")
                precondition(object["requestId"]?.int != nil, "no requestId in \(text)")
                if case .mediaStatus(_, let list)? = decoded {
                    for status in list { precondition(status.currentTime.isFinite && status.currentTime >= 0, "currentTime in \(text)") }
                }
            case .receiver:
                precondition((try? ReceiverMessage(json: json)) != nil, "undecodable receiver reply \(text)")
                precondition(object["requestId"]?.int != nil, "no requestId in \(text)")
            case .connection:
                precondition(["CLOSE", "CONNECTED"].contains(object["type"]?.string ?? ""), "connection message \(text)")
            default:
                break
            }
        }
    }
}
