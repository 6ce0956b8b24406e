import CastCore
import CastLogging
import CastProtocol

/// The connection namespace: CONNECT / CLOSE open and close virtual connections (openscreen's
/// rules: CONNECTED only for senders that sent a protocol version; a bad `connType` is answered
/// with CLOSE).
extension ReceiverDevice {
    /// A sender cannot open more virtual connections than this on one TCP connection (further
    /// CONNECTs are answered CLOSE), so a misbehaving sender cannot grow the table without end.
    static let maxVirtualConnectionsPerConnection = 64

    mutating func handleConnection(_ message: CastMessage, from id: SenderConnectionID, now: Double) -> [DeviceOutput] {
        guard message.sourceID != EndpointID.broadcast.rawValue, message.destinationID != EndpointID.broadcast.rawValue else {
            return ignore(message, id, "broadcast id on the connection namespace")
        }
        guard case .string(let text) = message.payload, let json = try? JSONValue.parse(text),
              let decoded = try? ConnectionMessage(json: json) else {
            return ignore(message, id, "connection message is not a JSON object of the expected shape")
        }
        let endpoint = message.destinationID
        switch decoded {
        case .connect(let request):
            guard endpoint == Self.platformEndpoint || endpoint == running?.transportID else {
                return ignore(message, id, "CONNECT to an unknown destination")
            }
            let reply = { (json: JSONValue) -> DeviceOutput in
                .send(CastMessage(source: endpoint, destination: message.sourceID, namespace: .connection, json: json), to: id)
            }
            let type = request.connType ?? .strong
            guard (0...2).contains(type.rawValue) else {
                log.warning("CONNECT with invalid connType \(type.rawValue): answered CLOSE", [
                    "source": .string(message.sourceID), "destination": .string(endpoint),
                ])
                return [reply(ConnectionMessage.close(reasonCode: nil).json)]
            }
            let isKnown = virtualConnections.exists(connection: id, senderID: message.sourceID, endpoint: endpoint)
            guard isKnown || virtualConnections.count(on: id) < Self.maxVirtualConnectionsPerConnection else {
                log.warning("CONNECT refused: \(Self.maxVirtualConnectionsPerConnection) virtual connections on connection \(id) already", [
                    "connection": .int(id.rawValue), "source": .string(message.sourceID), "destination": .string(endpoint),
                ])
                return [reply(ConnectionMessage.close(reasonCode: nil).json)]
            }
            let version = Self.negotiatedVersion(request)
            let isNew = virtualConnections.open(VirtualConnection(
                connection: id, senderID: message.sourceID, endpoint: endpoint, connType: type, userAgent: request.userAgent,
                senderInfo: request.senderInfo, protocolVersion: version, openedAt: now
            ))
            log.debug("virtual connection \(message.sourceID) → \(endpoint)\(isNew ? "" : " (again)")", [
                "connection": .int(id.rawValue), "source": .string(message.sourceID), "destination": .string(endpoint),
                "connType": .int(type.rawValue),
            ])
            guard let version else { return [] }
            return [reply(ConnectionMessage.connected(["protocolVersion": .int(Int64(version))]).json)]
        case .close:
            let closed = virtualConnections.close(connection: id, senderID: message.sourceID, endpoint: endpoint)
            log.debug("virtual connection \(message.sourceID) → \(endpoint) closed\(closed == nil ? " (was not open)" : "")", [
                "connection": .int(id.rawValue), "source": .string(message.sourceID), "destination": .string(endpoint),
            ])
            return []
        case .connected, .unknown:
            return ignore(message, id, "connection message \(decoded.typeName) from a sender")
        }
    }

    /// The highest valid (0…3) version of `protocolVersion` / `protocolVersionList`; nil when the
    /// sender sent neither (then no CONNECTED is sent).
    static func negotiatedVersion(_ request: ConnectRequest) -> Int? {
        var best: Int?
        if let list = request.protocolVersionList {
            best = 0
            for version in list where (0...3).contains(version) { best = max(best ?? 0, version) }
        }
        if let single = request.protocolVersion, (0...3).contains(single) { best = max(best ?? 0, single) }
        return best
    }
}
