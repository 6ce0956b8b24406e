import CastCore
import CastLogging
import CastProtocol
import Testing
@testable import CastReceiverSim

/// Drives one ``ReceiverDevice`` with JSON messages and a hand-moved clock. The default
/// buffering delay (0.25 s) and start time keep every clock value exact in binary.
struct SimHarness {
    var device: ReceiverDevice
    var now: Double = 1000
    var nextRequestID = 1

    static let uuid = "0123456789abcdef0123456789abcdef"

    init(
        catalogue: [AppDefinition] = [.defaultMediaReceiver], rules: [MediaRule] = [],
        timing: PlaybackTiming = PlaybackTiming(bufferingDelay: 0.25),
        isVideoDevice: Bool = true, requiresVirtualConnection: Bool = true, seed: UInt64 = 42,
        field: FieldProfile = .ideal, playbackRates: ClosedRange<Double> = DeviceProfile.defaultPlaybackRates,
        firstFrame: JitteredDelay = .zero, clockDriftPPM: Double = 0, logSystem: LogSystem = LogSystem()
    ) {
        let profile = DeviceProfile(uuid: Self.uuid, friendlyName: "Living Room", model: "Chromecast", isVideoDevice: isVideoDevice,
                                    initialVolume: 0.5, requiresVirtualConnection: requiresVirtualConnection, field: field,
                                    playbackRates: playbackRates, firstFrame: firstFrame, clockDriftPPM: clockDriftPPM)
        device = ReceiverDevice(profile: profile, catalogue: catalogue, mediaRules: rules, timing: timing, idSeed: seed,
                                logSystem: logSystem)
    }

    mutating func takeRequestID() -> Int {
        defer { nextRequestID += 1 }
        return nextRequestID
    }

    // MARK: Sending

    @discardableResult
    mutating func open(_ connection: UInt64) -> [DeviceOutput] {
        device.connectionOpened(SenderConnectionID(connection), now: now)
    }

    @discardableResult
    mutating func close(_ connection: UInt64) -> [DeviceOutput] {
        device.connectionClosed(SenderConnectionID(connection), now: now)
    }

    @discardableResult
    mutating func raw(
        _ text: String, on namespace: CastNamespace, to destination: String = "receiver-0", from sender: String = "sender-0",
        connection: UInt64 = 1
    ) -> [DeviceOutput] {
        let message = CastMessage(sourceID: sender, destinationID: destination, namespace: namespace, payload: .string(text))
        return device.receive(message, from: SenderConnectionID(connection), now: now)
    }

    @discardableResult
    mutating func send(
        _ json: JSONValue, on namespace: CastNamespace, to destination: String = "receiver-0", from sender: String = "sender-0",
        connection: UInt64 = 1
    ) -> [DeviceOutput] {
        raw(json.serialized(), on: namespace, to: destination, from: sender, connection: connection)
    }

    /// Opens the TCP connection (if new) and CONNECTs `sender` to `destination`.
    @discardableResult
    mutating func connect(_ connection: UInt64 = 1, sender: String = "sender-0", to destination: String = "receiver-0") -> [DeviceOutput] {
        if !device.snapshot(now: now).connections.contains(SenderConnectionID(connection)) { open(connection) }
        return send(["type": "CONNECT", "connType": 0, "origin": [:], "userAgent": "test"], on: .connection, to: destination,
                    from: sender, connection: connection)
    }

    /// A receiver-namespace request with the next requestId.
    @discardableResult
    mutating func receiver(
        _ type: String, _ members: JSONObject = [:], from sender: String = "sender-0", connection: UInt64 = 1
    ) -> [DeviceOutput] {
        send(request(type, members), on: .receiver, from: sender, connection: connection)
    }

    /// A media-namespace request with the next requestId, to the running app.
    @discardableResult
    mutating func media(
        _ type: String, _ members: JSONObject = [:], from sender: String = "sender-0", connection: UInt64 = 1
    ) -> [DeviceOutput] {
        send(request(type, members), on: .media, to: transportID ?? "no-app", from: sender, connection: connection)
    }

    mutating func request(_ type: String, _ members: JSONObject) -> JSONValue {
        var object: JSONObject = ["type": .string(type), "requestId": .int(Int64(takeRequestID()))]
        for (key, value) in members { object.set(key, value) }
        return .object(object)
    }

    /// Connects sender-0 on connection 1 to receiver-0, launches the DMR and connects to it.
    /// Returns the transportId.
    @discardableResult
    mutating func launchDMR(connection: UInt64 = 1, sender: String = "sender-0") -> String {
        connect(connection, sender: sender)
        receiver("LAUNCH", ["appId": "CC1AD845"], from: sender, connection: connection)
        let transport = transportID!
        connect(connection, sender: sender, to: transport)
        return transport
    }

    /// LOADs `media` (defaults: a 60 s BUFFERED mp4) and returns the outputs.
    @discardableResult
    mutating func load(
        contentID: String = "http://example.com/movie.mp4", contentType: String = "video/mp4", streamType: String = "BUFFERED",
        duration: Double? = 60, title: String = "A Movie", extra: JSONObject = [:], connection: UInt64 = 1
    ) -> [DeviceOutput] {
        var media: JSONObject = [
            "contentId": .string(contentID), "contentType": .string(contentType), "streamType": .string(streamType),
            "metadata": ["metadataType": 0, "title": .string(title)],
        ]
        if let duration { media.set("duration", .double(duration)) }
        var members: JSONObject = ["media": .object(media), "autoplay": true]
        for (key, value) in extra { members.set(key, value) }
        return self.media("LOAD", members, connection: connection)
    }

    @discardableResult
    mutating func advance(by seconds: Double) -> [DeviceOutput] {
        now += seconds
        return device.advance(to: now)
    }

    // MARK: Reading

    var transportID: String? { device.snapshot(now: now).app?.transportID }

    var snapshot: DeviceSnapshot { device.snapshot(now: now) }

    /// The current media status via GET_STATUS (nil for `status: []`).
    mutating func mediaStatus() -> MediaStatus? {
        let outputs = media("GET_STATUS")
        let statuses = Self.mediaStatuses(outputs)
        return statuses.first?.status.first
    }
}

/// One decoded `.send`.
struct Sent {
    var connection: UInt64
    var message: CastMessage
    var json: JSONValue

    var type: String? { json["type"]?.string ?? json["responseType"]?.string }
    var requestID: Int64? { json["requestId"]?.int }
}

extension SimHarness {
    /// Every `.send`, decoded; records an issue for a payload that is not a JSON object.
    static func sent(_ outputs: [DeviceOutput]) -> [Sent] {
        outputs.compactMap { output -> Sent? in
            guard case .send(let message, let id) = output else { return nil }
            guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text), json.object != nil else {
                Issue.record("payload is not a JSON object: \(message.payload)")
                return nil
            }
            return Sent(connection: id.rawValue, message: message, json: json)
        }
    }

    static func sent(_ outputs: [DeviceOutput], on namespace: CastNamespace) -> [Sent] {
        sent(outputs).filter { $0.message.namespace == namespace }
    }

    /// MEDIA_STATUS messages: (the sent message, its requestId, its statuses).
    static func mediaStatuses(_ outputs: [DeviceOutput]) -> [(sent: Sent, requestID: RequestID?, status: [MediaStatus])] {
        sent(outputs, on: .media).compactMap { item in
            guard case .mediaStatus(let id, let status)? = try? MediaMessage(json: item.json) else { return nil }
            return (item, id, status)
        }
    }

    static func receiverMessages(_ outputs: [DeviceOutput]) -> [(sent: Sent, message: ReceiverMessage)] {
        sent(outputs, on: .receiver).compactMap { item in
            guard let message = try? ReceiverMessage(json: item.json) else {
                Issue.record("undecodable receiver message \(item.json)")
                return nil
            }
            return (item, message)
        }
    }

    static func receiverStatuses(_ outputs: [DeviceOutput]) -> [(sent: Sent, requestID: RequestID?, status: ReceiverStatus)] {
        receiverMessages(outputs).compactMap { item in
            guard case .receiverStatus(let id, let status) = item.message else { return nil }
            return (item.sent, id, status)
        }
    }

    static func advertisements(_ outputs: [DeviceOutput]) -> [DeviceAdvertisementState] {
        outputs.compactMap {
            if case .advertisementChanged(let state) = $0 { return state }
            return nil
        }
    }

    /// The single media message of `type` in `outputs`.
    static func mediaMessage(_ outputs: [DeviceOutput], type: String) -> MediaMessage? {
        let matching = sent(outputs, on: .media).filter { $0.type == type }
        guard matching.count == 1 else {
            Issue.record("expected one \(type), got \(matching.count) in \(sent(outputs).map(\.json))")
            return nil
        }
        return try? MediaMessage(json: matching[0].json)
    }
}
